// What a test needs from the platform, and why. A test that cannot run here is skipped with the
// reason in its name, so a macOS or Windows run shows what it did not check instead of hiding it.
import { describe, it } from "vitest";

export interface PlatformNeed {
  /** True when this platform lacks it. */
  missing: boolean;
  reason: string;
}

export const LINUX_PROCFS: PlatformNeed = {
  missing: process.platform !== "linux",
  reason: "Linux only: needs /proc (descriptors read back by path, process states)",
};

export const POSIX_SHELL: PlatformNeed = {
  missing: process.platform === "win32",
  reason: "POSIX only: the bash tool runs $SHELL -c, /bin/sh by default",
};

export const POSIX_FIFO: PlatformNeed = {
  missing: process.platform === "win32",
  reason: "POSIX only: needs mkfifo",
};

/** `name`, with the reason appended where the platform lacks `need`. */
function named(need: PlatformNeed, name: string): string {
  return need.missing ? `${name} [skipped: ${need.reason}]` : name;
}

/** `describe`, skipped with the reason in its name where the platform lacks `need`. */
export function describeNeeding(need: PlatformNeed, name: string, body: () => void): void {
  describe.skipIf(need.missing)(named(need, name), body);
}

/** `it`, skipped with the reason in its name where the platform lacks `need`. */
export function itNeeding(need: PlatformNeed, name: string, body: () => Promise<void> | void, timeout?: number): void {
  it.skipIf(need.missing)(named(need, name), body, timeout);
}

export const ROOT_TO_DROP: PlatformNeed = {
  missing: process.platform === "win32" || process.getuid?.() !== 0,
  reason: "needs root, to run a child process as the unprivileged uid 65534",
};
