/**
 * Longest time the event loop was busy between two 5 ms timer ticks while `work` runs. Event-loop
 * utilisation counts only time spent outside the poll for I/O, so a loop that merely waits for
 * the CPU on a loaded machine does not count as blocked; a JS loop over pixels does.
 */
export async function longestBlock<T>(work: () => Promise<T>): Promise<{ result: T; blocked: number }> {
  let prev = performance.eventLoopUtilization();
  let blocked = 0;
  const sample = (): void => {
    const now = performance.eventLoopUtilization();
    blocked = Math.max(blocked, performance.eventLoopUtilization(now, prev).active);
    prev = now;
  };
  const timer = setInterval(sample, 5);
  try {
    const result = await work();
    sample();
    return { result, blocked };
  } finally {
    clearInterval(timer);
  }
}
