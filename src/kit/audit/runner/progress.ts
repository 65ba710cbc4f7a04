/**
 * Progress of an audit on stderr, so that stdout stays the report.
 *
 * Promises: on a terminal, one line redrawn in place (the property, and the run it is at, at most ten
 * redraws a second), erased when the run ends; elsewhere (CI logs, pipes) one plain line per property
 * once it is done, with the verdict word the report's table gives it (`word`):
 * `audit: [3/14] containment.read passed (50 runs, 1.2s)`.
 */
import type { CliIo } from "../../cli-command.js";
import type { PropertyResult } from "./run.js";

export interface Progress {
  start(index: number, total: number, id: string): void;
  atCase(started: number, runs: number): void;
  done(index: number, total: number, result: PropertyResult): void;
  end(): void;
}

const REDRAW_MS = 100;

export function progressOn(io: CliIo, word: (result: PropertyResult) => string): Progress {
  if (io.stderrIsTTY !== true)
    return {
      start() {},
      atCase() {},
      done(index, total, result) {
        io.stderr(`audit: [${index + 1}/${total}] ${result.id} ${word(result)} (${result.runs} runs, ${(result.timeMs / 1000).toFixed(1)}s)\n`);
      },
      end() {},
    };
  let label = "";
  let drawnAt = 0;
  const draw = (text: string) => io.stderr(`\r\x1b[K${text}`);
  return {
    start(index, total, id) {
      label = `audit [${index + 1}/${total}] ${id}`;
      drawnAt = Date.now();
      draw(`${label} …`);
    },
    atCase(started, runs) {
      if (Date.now() - drawnAt < REDRAW_MS) return;
      drawnAt = Date.now();
      draw(`${label}: run ${started} of ${runs}${started > runs ? " (shrinking)" : ""}`);
    },
    done() {},
    end() {
      draw("");
    },
  };
}
