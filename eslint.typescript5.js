// typescript-eslint drives the TypeScript 5/6 compiler API, which TypeScript 7 (this project's
// `typescript`, a native compiler) no longer has. Its `typescript` requires are pointed at the
// `typescript5` alias, as web/console/build.ts does for openapi-typescript. Imported first by
// eslint.config.js, before typescript-eslint loads.
import Module from 'node:module';

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (
    (request === 'typescript' || request.startsWith('typescript/')) &&
    parent?.filename &&
    /[\\/]node_modules[\\/](@typescript-eslint|ts-api-utils|typescript-eslint)[\\/]/.test(parent.filename)
  ) {
    return resolve.call(this, request.replace(/^typescript/, 'typescript5'), parent, ...rest);
  }
  return resolve.call(this, request, parent, ...rest);
};
