// Runs the giftjobs CLI from the TypeScript sources (tests spawn it with `node --import tsx`).
import { main } from "../../src/cli/main.js";

await main(process.argv);
