# The orchard image: one CLI (`bin/orchard.mjs`), one service per container, chosen by the
# command (`serve orch|chat|registry`, `migrate`, `rebuild`, `replay`); see compose.yaml.
# The sources are precompiled once here (`orchard release bundle`: esbuild, a runtime dependency,
# into dist/), and bin/orchard.mjs runs dist/cli.js: no container start compiles TypeScript.
# typescript (a dev dependency) is not installed.
#
# The web console is built in a stage of its own (Vite and the rest of its toolchain are dev
# dependencies); only its dist/ reaches the image. Its build stamp matches the sources copied
# below, so `serve` serves it as built.
FROM node:20.19-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` finds no console sources yet and only says so.
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:console

FROM node:20.19-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so source edits do not invalidate this layer.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Sources stay owned by root: the service cannot rewrite its own code. .dockerignore keeps
# node_modules, data, secrets, tests and bench out.
COPY . .
COPY --from=console /app/web/console/dist web/console/dist
RUN node bin/orchard.mjs release bundle /app

# DATA_DIR: owned by `node`, so a fresh named volume mounted here inherits that owner.
RUN mkdir -p /var/lib/orchard && chown node:node /var/lib/orchard
ENV DATA_DIR=/var/lib/orchard

USER node
EXPOSE 8585 8600 8400
# No default command: compose (or `docker run orchard:local serve orch`) names the service.
ENTRYPOINT ["node", "bin/orchard.mjs"]
