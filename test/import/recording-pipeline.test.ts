import { describe, expect, it } from "vitest";
import { RecordingPipeline } from "../../src/import/recording-pipeline.js";

/** A step that waits until released, so a test decides the order in which steps end. */
class Gate {
  private opened = new Map<string, () => void>();
  private waits = new Map<string, Promise<void>>();
  wait(name: string): Promise<void> {
    let wait = this.waits.get(name);
    if (!wait) {
      wait = new Promise<void>((resolve) => this.opened.set(name, resolve));
      this.waits.set(name, wait);
    }
    return wait;
  }
  open(name: string): void {
    void this.wait(name);
    this.opened.get(name)!();
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Sent at once, recorded when `answer` settles: the store's answer comes later. */
const sentNow = (answer: Promise<void>) => ({ sent: Promise.resolve(), recorded: answer });

/**
 * A store with RECORD's fence: batch n is recorded only when batch n - 1 was; `refuse` names the
 * batch it refuses for its own reason.
 */
function fencedStore(refuse: number) {
  const sent: number[] = [];
  const recorded: number[] = [];
  const record = (n: number) => {
    sent.push(n);
    const answer = (async () => {
      await tick();
      if (n > 1 && !recorded.includes(n - 1)) throw new Error(`batch ${n} fenced`);
      if (n === refuse) throw new Error(`budget passed at batch ${n}`);
      recorded.push(n);
    })();
    return sentNow(answer);
  };
  return { sent, recorded, record };
}

describe("RecordingPipeline (pass 2 in step)", () => {
  it("sends a batch once its own lines are durable and the batch before it was sent, without waiting for that one's answer", async () => {
    const gate = new Gate();
    const log: string[] = [];
    const pipeline = new RecordingPipeline<number>(
      async (n) => {
        log.push(`durable ${n} start`);
        await gate.wait(`durable ${n}`);
        log.push(`durable ${n}`);
      },
      (n) => {
        log.push(`record ${n} sent`);
        return sentNow(
          gate.wait(`record ${n}`).then(() => {
            log.push(`record ${n}`);
          }),
        );
      },
    );
    await pipeline.add(1);
    await pipeline.add(2);
    await tick();
    expect(log).toEqual(["durable 1 start"]);
    gate.open("durable 1");
    await tick();
    // Batch 2's lines are flushed while batch 1 is recorded.
    expect(log.slice(0, 2)).toEqual(["durable 1 start", "durable 1"]);
    expect(new Set(log.slice(2))).toEqual(new Set(["durable 2 start", "record 1 sent"]));
    gate.open("durable 2");
    await tick();
    // Batch 2 is sent while batch 1 is not yet answered: Redis goes on to it without a wait.
    expect(log).toContain("record 2 sent");
    expect(log).not.toContain("record 1");
    // A third batch is taken while batch 1 is not answered; a fourth waits until it is recorded:
    // three batches in flight at most.
    await pipeline.add(3);
    let fourth = false;
    const adding = pipeline.add(4).then(() => {
      fourth = true;
    });
    await tick();
    expect(fourth).toBe(false);
    gate.open("record 1");
    await adding;
    await tick();
    expect(log).not.toContain("record 3 sent");
    gate.open("durable 3");
    gate.open("durable 4");
    gate.open("record 2");
    gate.open("record 3");
    gate.open("record 4");
    await pipeline.drain();
    expect(log.filter((l) => l.startsWith("record") && l.endsWith("sent"))).toEqual([
      "record 1 sent",
      "record 2 sent",
      "record 3 sent",
      "record 4 sent",
    ]);
    expect(log.indexOf("record 3 sent")).toBeGreaterThan(log.indexOf("durable 3"));
    expect(log.indexOf("record 4 sent")).toBeGreaterThan(log.indexOf("durable 4"));
  });

  it("a batch that must wait for the one before it holds back the sends after it", async () => {
    const gate = new Gate();
    const sent: number[] = [];
    const pipeline = new RecordingPipeline<number>(
      async () => {},
      (n, before) => {
        if (n !== 2) {
          sent.push(n);
          return sentNow(gate.wait(`record ${n}`));
        }
        let isSent = () => {};
        const sending = new Promise<void>((resolve) => {
          isSent = resolve;
        });
        const recorded = before.then(() => {
          sent.push(n);
          isSent();
          return gate.wait(`record ${n}`);
        });
        return { sent: sending, recorded };
      },
    );
    await pipeline.add(1);
    await pipeline.add(2);
    const adding = pipeline.add(3);
    await tick();
    expect(sent).toEqual([1]);
    gate.open("record 1");
    await adding;
    await tick();
    expect(sent).toEqual([1, 2, 3]);
    gate.open("record 2");
    gate.open("record 3");
    await pipeline.drain();
  });

  it("records nothing after a refused batch, those sent meanwhile fenced; writes nothing more; drain throws the refusal", async () => {
    const durable: number[] = [];
    const store = fencedStore(2);
    const pipeline = new RecordingPipeline<number>(async (n) => {
      durable.push(n);
    }, store.record);
    const added = (async () => {
      for (let n = 1; n <= 6; n += 1) await pipeline.add(n);
    })();
    await expect(added).rejects.toThrow("budget passed at batch 2");
    await expect(pipeline.drain()).rejects.toThrow("budget passed at batch 2");
    expect(store.recorded).toEqual([1]);
    // Batches 3 and 4 may have been sent before batch 2 answered: the fence refused them.
    expect(store.sent).toEqual([1, 2, 3, 4].slice(0, store.sent.length));
    // Their lines may have been flushed while batch 2 was recorded, as a crash there would
    // leave them (docs/architecture/import.md, "Pass 2 in step"); no later batch's.
    expect(durable.length).toBeLessThanOrEqual(4);
    expect(durable).toEqual([1, 2, 3, 4].slice(0, durable.length));
  });

  it("sends no batch whose lines could not be written", async () => {
    const store = fencedStore(0);
    const pipeline = new RecordingPipeline<number>(async (n) => {
      if (n === 2) throw new Error("disk full");
    }, store.record);
    await pipeline.add(1);
    await pipeline.add(2);
    await expect(pipeline.add(3).then(() => pipeline.add(4))).rejects.toThrow("disk full");
    await expect(pipeline.drain()).rejects.toThrow("disk full");
    expect(store.sent).toEqual([1]);
    expect(store.recorded).toEqual([1]);
  });
});
