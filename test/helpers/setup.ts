// vitest setupFiles: every test file runs this first. Its hooks are the outermost, so they run
// before the file's beforeEach hooks and after its afterEach/afterAll hooks (queues and workers
// are closed by then). Each Redis prefix and temporary folder a test makes with uniquePrefix()
// or tmpDir() is deleted after that test; one made outside a test, after the file.
import { afterAll, afterEach, beforeEach } from "vitest";
import { fileEnded, testEnded, testStarts } from "./cleanup.js";

beforeEach(() => {
  testStarts();
});

afterEach(async () => {
  await testEnded();
});

afterAll(async () => {
  await fileEnded();
});
