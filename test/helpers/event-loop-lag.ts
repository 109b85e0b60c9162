/**
 * How long the main thread keeps its event loop from running a 5 ms timer. `wall`: how late a
 * tick fires. `max`: on Linux, the longest the main thread was on a CPU between two ticks
 * (/proc/thread-self/schedstat, field 1); elsewhere `wall`. On a shared two-core machine with
 * eight busy workers a tick also waits tens of ms for a CPU, or for the kernel's memory-map lock
 * that other threads hold, whatever the code on the main thread does; the code under test takes
 * no lock on the main thread, so what it can add to the loop's lag is its own CPU time, which
 * `max` measures (wall-clock lag figures are printed next to it).
 */
import { existsSync, readFileSync } from 'node:fs';

const SCHEDSTAT = '/proc/thread-self/schedstat';
const INTERVAL = 5;

const onCpuMs = (): number => Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6;

export function startLagMonitor(): { stop(): { max: number; wall: number } } {
  const sched = existsSync(SCHEDSTAT);
  let last = performance.now();
  let lastCpu = sched ? onCpuMs() : 0;
  let busy = 0;
  let wall = 0;
  // Also called by stop(): work that blocks from the start to the end lets no tick run.
  const sample = (): void => {
    const now = performance.now();
    wall = Math.max(wall, now - last - INTERVAL);
    if (sched) {
      const cpu = onCpuMs();
      busy = Math.max(busy, cpu - lastCpu);
      lastCpu = cpu;
    }
    last = now;
  };
  const timer = setInterval(sample, INTERVAL);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { max: sched ? busy : wall, wall };
    },
  };
}
