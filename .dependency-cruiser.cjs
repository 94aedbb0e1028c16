// Import rules of src/ (docs/architecture.md, "Layers"): no import circles, type-only imports
// included (a type circle is still two folders that cannot be understood one without the
// other), and no arrow from a lower layer up. `npm run lint` runs this.
const layer = (name) => `^src/${name}/`;
const upward = (from, to) => ({
  name: `${from}-not-${to.join("-")}`,
  comment: `src/${from} sits below ${to.map((t) => `src/${t}`).join(", ")}`,
  severity: "error",
  from: { path: layer(from) },
  to: { path: `^src/(${to.join("|")})/` },
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
    upward("errors", [
      "api",
      "queue",
      "catalog",
      "orders",
      "jobs",
      "metrics",
      "dashboard",
      "demo",
      "sandbox",
      "cli",
    ]),
    upward("queue", [
      "api",
      "catalog",
      "orders",
      "jobs",
      "metrics",
      "dashboard",
      "demo",
      "sandbox",
      "cli",
    ]),
    upward("api", [
      "queue",
      "catalog",
      "orders",
      "jobs",
      "metrics",
      "dashboard",
      "demo",
      "sandbox",
      "cli",
    ]),
    upward("catalog", ["orders", "jobs", "metrics", "dashboard", "demo", "sandbox", "cli"]),
    upward("orders", ["jobs", "metrics", "dashboard", "demo", "sandbox", "cli"]),
    upward("jobs", ["metrics", "dashboard", "demo", "sandbox", "cli"]),
    upward("metrics", ["dashboard", "demo", "sandbox", "cli"]),
    upward("dashboard", ["demo", "sandbox", "cli"]),
    upward("sandbox", [
      "queue",
      "catalog",
      "orders",
      "jobs",
      "metrics",
      "dashboard",
      "demo",
      "cli",
    ]),
    upward("demo", ["cli"]),
    {
      name: "src-not-test",
      comment: "Shipped code never imports the tests",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^test/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
