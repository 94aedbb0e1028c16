#!/usr/bin/env node
// The CLI bundled by esbuild lives in dist/cli/ (built by `npm ci` through the prepare script:
// scripts/cli-bundle.mjs).
import("../dist/cli/main.js").then((m) => m.main(process.argv));
