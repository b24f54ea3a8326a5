// An agent's working directory: a git worktree on branch `agent/<name>` from its base branch when
// the project's repo_path is a git repository, else a plain directory. A persistent agent's
// directory is kept when it ends, and a later agent of the same name and project resumes in it
// (the branch too); any other is removed.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const git = (args: string[]) => run('git', args, { timeout: 60_000 });

export interface WorkDir {
  path: string;
  /** The repository it is a worktree of, or null for a plain directory. */
  repo: string | null;
  branch: string | null;
}

async function isGitRepository(dir: string): Promise<boolean> {
  try {
    await git(['-C', dir, 'rev-parse', '--git-dir']);
    return true;
  } catch {
    return false;
  }
}

async function branchExists(repo: string, branch: string): Promise<boolean> {
  try {
    await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    return true;
  } catch {
    return false;
  }
}

export async function prepareWorkDir(
  root: string,
  agent: { name: string; base_branch: string },
  project: { id: string; repo_path: string | null },
): Promise<WorkDir> {
  const dir = path.join(root, project.id, agent.name);
  await mkdir(path.dirname(dir), { recursive: true });
  if (!project.repo_path || !(await isGitRepository(project.repo_path))) {
    await mkdir(dir, { recursive: true });
    return { path: dir, repo: null, branch: null };
  }
  const repo = project.repo_path;
  const branch = `agent/${agent.name}`;
  if (existsSync(dir)) return { path: dir, repo, branch }; // a persistent agent's worktree: resume
  if (await branchExists(repo, branch)) await git(['-C', repo, 'worktree', 'add', dir, branch]);
  else await git(['-C', repo, 'worktree', 'add', '-b', branch, dir, agent.base_branch]);
  return { path: dir, repo, branch };
}

/** Remove the directory unless the agent is persistent (the branch stays either way). */
export async function releaseWorkDir(work: WorkDir, persistent: boolean): Promise<void> {
  if (persistent) return;
  if (work.repo) {
    await git(['-C', work.repo, 'worktree', 'remove', '--force', work.path]).catch(() => {});
    await git(['-C', work.repo, 'worktree', 'prune']).catch(() => {});
  }
  await rm(work.path, { recursive: true, force: true });
}
