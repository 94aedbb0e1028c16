#!/usr/bin/env bash
# `.ci/run`'s production install check: docs/operations.md's "Running in production" install, run
# in a temporary copy of this working tree (its files git knows of, no node_modules/ or dist/):
# `npm ci` (its prepare builds dist/), `npm prune --omit=dev`, then, with no devDependency left on
# disk, `giftjobs --version` and a worker started against Redis (GIFTJOBS_REDIS_URL) under a
# prefix of its own, stopped with SIGTERM: it must exit 0. Removes the copy and the prefix's
# Redis keys after, whatever happened.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=$(mktemp -d "${TMPDIR:-/tmp}/giftjobs-production-XXXXXX")
prefix="giftjobs-ci-production-$$-$RANDOM"
worker=""

cleanup() {
  if [ -n "$worker" ] && kill -0 "$worker" 2>/dev/null; then kill -KILL "$worker" 2>/dev/null || true; fi
  if [ -d "$dir/node_modules/ioredis" ]; then
    (cd "$dir" && node -e '
      const { Redis } = require("ioredis");
      const redis = new Redis(process.env.GIFTJOBS_REDIS_URL || "redis://127.0.0.1:6379", {
        maxRetriesPerRequest: 1,
      });
      redis.on("error", () => {}); // a failed command says it once, below
      (async () => {
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", `${process.argv[1]}:*`, "COUNT", 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== "0");
      })()
        .catch((error) => console.error(`cleaning Redis keys ${process.argv[1]}:*: ${error.message}`))
        .finally(() => redis.disconnect());' "$prefix") || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "production install: $*" >&2
  [ -f "$dir/worker.log" ] && sed 's/^/  worker: /' "$dir/worker.log" >&2
  exit 1
}

# The working tree as the rest of CI sees it: tracked and untracked files, minus ignored and deleted.
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' file; do if [ -e "$file" ]; then printf '%s\0' "$file"; fi; done \
  | tar --null -T - -cf - | tar -xf - -C "$dir"
cd "$dir"

npm ci --prefer-offline --no-audit --no-fund
npm prune --omit=dev --no-audit --no-fund

# Every package the lock marks dev-only is gone, so what follows runs without them.
node -e '
  const { existsSync } = require("node:fs");
  const packages = require("./package-lock.json").packages;
  const left = Object.keys(packages).filter((path) => packages[path].dev && existsSync(path));
  if (left.length > 0) {
    console.error(`dev packages left after npm prune --omit=dev: ${left.join(", ")}`);
    process.exit(1);
  }' || fail "npm prune --omit=dev left dev packages"

version=$(node bin/giftjobs.js --version) || fail "giftjobs --version failed"
[ "$version" = "$(node -p 'require("./package.json").version')" ] \
  || fail "giftjobs --version printed \"$version\""

mkdir data
GIFTJOBS_PREFIX="$prefix" GIFTJOBS_DATA_DIR="$dir/data" GIFTJOBS_LOG_LEVEL=info \
  node bin/giftjobs.js worker >worker.log 2>&1 &
worker=$!
for _ in $(seq 1 150); do
  grep -q "worker started" worker.log && break
  kill -0 "$worker" 2>/dev/null || fail "the worker exited before it started"
  sleep 0.1
done
grep -q "worker started" worker.log || fail "the worker did not start within 15 s"

kill -TERM "$worker"
for _ in $(seq 1 150); do kill -0 "$worker" 2>/dev/null || break; sleep 0.1; done
kill -0 "$worker" 2>/dev/null && fail "the worker did not stop within 15 s of SIGTERM"
code=0
wait "$worker" || code=$?
worker=""
[ "$code" = 0 ] || fail "the worker exited $code after SIGTERM"
grep -q "worker stopped" worker.log || fail "the worker did not log that it stopped"
echo "== production install: giftjobs $version and a worker ran with dev dependencies pruned"
