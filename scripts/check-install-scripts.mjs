// CI's check that every dependency's install script was reviewed (.ci/run): reads
// `npm install-scripts ls --json` on stdin and fails, naming each package, when one is not
// covered by package.json's `allowScripts` (npm 11 only warns; npm 12 skips such scripts).
// The review and its decisions: docs/development.md, "Development".
import { text } from "node:stream/consumers";

const listed = JSON.parse((await text(process.stdin)) || "{}");
const pending = (listed.allowScripts ?? []).flatMap((entry) =>
  (entry.changes ?? []).filter((c) => c.change === "pending").map((c) => c.key ?? entry.name),
);
if (pending.length > 0) {
  process.stderr.write(
    `install scripts not reviewed: ${pending.join(", ")}\n` +
      "read each package's script, then record the decision in package.json's allowScripts: " +
      "npm install-scripts approve PKG (pinned to its version) or npm install-scripts deny PKG\n",
  );
  process.exit(1);
}
process.stdout.write("every install script is reviewed (package.json allowScripts)\n");
