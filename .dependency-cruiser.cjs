// Import rules of src/ and jobs/ (docs/architecture/layers-and-layout.md, "Layers"): no import
// circles, type-only imports included (a type circle is still two folders that cannot be understood
// one without the other), no arrow from a lower layer up, and nothing from devDependencies at run
// time. `npm run lint` runs this.

// From the bottom up. Folders of one layer do not import each other either. Each is a folder of
// src/, except jobs: the top-level jobs/ (one folder per BullMQ queue), above the domain code and
// below the worker wiring that runs it.
const LAYERS = [
  ["errors"],
  ["redis", "api"],
  // catalog, ledger and orders know their stores through interfaces, never PostgreSQL.
  ["catalog"],
  ["ledger"],
  ["orders"],
  // db: all the PostgreSQL code (src/db/, docs/catalog-database.md), used when
  // GIFTJOBS_DATABASE_URL is set: the connection, migrations and locks, and the stores of the
  // catalog, the order journal, the paid memory and the product overrides.
  ["db"],
  // audit: the audit trail (docs/architecture/audit.md), above db (its PostgreSQL store):
  // campaigns (the four-eyes rule) and everything above record into it.
  ["audit"],
  // stores: the one place that turns the settings into the stores, files or PostgreSQL
  // (src/stores/stores.ts, docs/architecture/overview.md, "Where state lives"); everything
  // above is handed them.
  ["stores"],
  ["campaigns"],
  // doctor asks Redis, the service and the snapshot store; nothing imports it but the CLI.
  ["import", "doctor"],
  ["webhooks"],
  ["jobs"],
  ["worker"],
  ["metrics"],
  ["dashboard"],
  ["demo"],
  ["cli"],
];
// The sandbox stands beside the product: it may use errors and the API's types, nothing else.
const SANDBOX_MAY_USE = ["errors", "api"];

const folders = LAYERS.flat();
const levelOf = (folder) => LAYERS.findIndex((layer) => layer.includes(folder));
const pathOf = (folder) => (folder === "jobs" ? "jobs" : `src/${folder}`);

/** The folders `folder` may not import: those above it, its own layer's others, the sandbox. */
function forbiddenFor(folder) {
  const level = levelOf(folder);
  return [
    ...folders.filter((other) => other !== folder && levelOf(other) >= level),
    ...(folder === "cli" || folder === "demo" ? [] : ["sandbox"]),
  ];
}

const rule = (from, to) => ({
  name: `${from}-not-${to.join("-")}`,
  comment: `${pathOf(from)} may not import ${to.map(pathOf).join(", ")}`,
  severity: "error",
  from: { path: `^${pathOf(from)}/` },
  to: { path: `^(${to.map(pathOf).join("|")})/` },
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "An import circle: the modules cannot be read, tested or loaded one without the other",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...folders.map((folder) => rule(folder, forbiddenFor(folder))),
    rule(
      "sandbox",
      folders.filter((f) => !SANDBOX_MAY_USE.includes(f)),
    ),
    {
      name: "not-to-dev-dep",
      comment:
        "Shipped code imports a package of package.json's devDependencies, which a production " +
        "install (npm prune --omit=dev) does not have: move it to dependencies. An import the " +
        "compiler erases (types only) is allowed.",
      severity: "error",
      from: { path: "^(src|jobs)/" },
      // "pre-compilation-only", not "type-only": dependency-cruiser also calls
      // `import x, { type T } from "m"` type-only, and that import stays in the JavaScript.
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["pre-compilation-only"] },
    },
    {
      name: "src-not-test",
      comment: "Shipped code never imports the tests",
      severity: "error",
      from: { path: "^(src|jobs)/" },
      to: { path: "^test/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count (circles, layers); "specify" also marks those the compiler erases.
    tsPreCompilationDeps: "specify",
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
