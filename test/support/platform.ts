// What a test needs from the platform, and why. A test that cannot run here is skipped with the
// reason in its name, so a macOS or Windows run shows what it did not check instead of hiding it.
import { describe } from "vitest";

export interface PlatformNeed {
  /** True when this platform lacks it. */
  missing: boolean;
  reason: string;
}

export const LINUX_PROCFS: PlatformNeed = {
  missing: process.platform !== "linux",
  reason: "Linux only: needs /proc (descriptors read back by path, process states)",
};

/** `describe`, skipped with the reason in its name where the platform lacks `need`. */
export function describeNeeding(need: PlatformNeed, name: string, body: () => void): void {
  describe.skipIf(need.missing)(need.missing ? `${name} [skipped: ${need.reason}]` : name, body);
}
