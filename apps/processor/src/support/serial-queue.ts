// Work run one piece at a time, in the order it was given: a task's resumes, batches, ticks and
// close never interleave, whatever awaits each of them holds.

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `work` after everything given before it; its failure fails only its own promise. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
