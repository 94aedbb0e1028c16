import { parentPort } from "node:worker_threads";
import { orderKey } from "../src/orders/keys.js";
const x: number = 1;
parentPort!.postMessage({ key: orderKey("c", 0, ["a"]), x });
