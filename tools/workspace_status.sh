#!/bin/sh
# Bazel's workspace status (.bazelrc: --workspace_status_command): the
# commit the tree was built from, for builds with --stamp
# (//server/version). Prints nothing outside a git checkout or without
# git: the build then says commit "unknown". Always exits 0.
commit=$(git rev-parse HEAD 2>/dev/null) || exit 0
[ -n "$commit" ] || exit 0
# Uncommitted changes to tracked files: the commit alone does not say
# what was built.
if ! git diff-index --quiet HEAD -- 2>/dev/null; then
  commit="$commit-dirty"
fi
echo "STABLE_GIT_COMMIT $commit"
