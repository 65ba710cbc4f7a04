/**
 * `isInside` under both path flavours, against the component-wise reference (reference-inside.ts):
 * the root's twins (similar prefixes, letter case, normalization: root-twins.ts), `..foo`, `..` climbs,
 * other drives, UNC and device prefixes, and mixed separators on win32. Calling an outside path inside
 * breaks the check; calling an inside path outside is over-strict, a departure from the chapter's
 * convention (a warning unless `--strict`).
 */
import fc from "fast-check";
import * as nodePath from "node:path";
import type { AuditProperty } from "../runner/property.js";
import { violation } from "../runner/property.js";
import { showValue } from "../runner/show.js";
import { referenceInsidePosix, referenceInsideWin32 } from "../reference-inside.js";
import { SIMILAR_PREFIX_SUFFIXES, namedTwins } from "../../sandbox/root-twins.js";

interface PathPair {
  root: string;
  path: string;
}

const rootName = fc.constantFrom("ws", "work", "Work", "a", "wé");
const tailSegment = fc.constantFrom("..", ".", "", "..foo", "...", "x", "ws", "WS", "work", ...SIMILAR_PREFIX_SUFFIXES.map((s) => `ws${s}`));

/**
 * The part itself (index 0), or one of its string twins: the one-of-a-kind ones (letter case,
 * normalization) as often as all the similar prefixes together.
 */
function twinOf(part: string, index: number): string {
  const twins = namedTwins(part);
  const [first, second] = twins;
  const spellings = [part, part, first ?? part, second ?? part, twins[index % Math.max(1, twins.length)] ?? part];
  return spellings[index % spellings.length] ?? part;
}

const posixPair: fc.Arbitrary<PathPair> = fc
  .record({
    rootParts: fc.array(rootName, { minLength: 1, maxLength: 3 }),
    shared: fc.nat({ max: 3 }),
    twin: fc.nat(),
    tail: fc.array(tailSegment, { maxLength: 4 }),
  })
  .map(({ rootParts, shared, twin, tail }) => {
    const kept = rootParts.slice(0, shared);
    const near = rootParts.slice(shared).map((part, index) => (index === 0 ? twinOf(part, twin) : part));
    return { root: `/${rootParts.join("/")}`, path: `/${[...kept, ...near, ...tail].join("/")}` };
  });

/** `\\?\` and `\\.\`, the namespaces the win32 pairs' devices may name. */
export const DEVICE_NAMESPACE = /^[\\/]{2}[?.][\\/]/;

const win32Device = fc.constantFrom("C:", "c:", "D:", "\\\\server\\share", "\\\\SERVER\\Share", "\\\\?\\C:", "\\\\.\\C:", "\\\\?\\UNC");
const separator = fc.constantFrom("\\", "/");

const win32Pair: fc.Arbitrary<PathPair> = fc
  .record({
    rootDevice: win32Device,
    pathDevice: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: win32Device }),
    rootParts: fc.array(rootName, { minLength: 1, maxLength: 3 }),
    upperCase: fc.boolean(),
    suffix: fc.constantFrom("", ...SIMILAR_PREFIX_SUFFIXES),
    tail: fc.array(fc.tuple(separator, tailSegment), { maxLength: 4 }),
    rootSeparator: separator,
  })
  .map(({ rootDevice, pathDevice, rootParts, upperCase, suffix, tail, rootSeparator }) => {
    const root = `${rootDevice}\\${rootParts.join("\\")}`;
    const device = pathDevice ?? (upperCase ? rootDevice.toUpperCase() : rootDevice);
    const again = rootParts.map((part) => (upperCase ? part.toUpperCase() : part)).join(rootSeparator);
    const steps = DEVICE_NAMESPACE.test(device) ? belowTheDevice(rootParts.length, tail) : tail;
    return { root, path: `${device}${rootSeparator}${again}${suffix}${steps.map(([sep, seg]) => sep + seg).join("")}` };
  });

/**
 * The tail without the `..` steps that would climb above a device namespace's drive: there the
 * reference stops at the device, path.win32 pops the drive, and Windows does not resolve `..` at all
 * (`\\?\`), so no answer is the contract's. A `..` that stays below the drive is kept.
 */
function belowTheDevice<T extends readonly [string, string]>(depth: number, tail: readonly T[]): T[] {
  let below = depth;
  return tail.filter(([, segment]) => {
    if (segment === "..") {
      if (below === 0) return false;
      below -= 1;
    } else if (segment !== "" && segment !== ".") below += 1;
    return true;
  });
}

function isInsideProperty(flavour: "posix" | "win32"): AuditProperty<PathPair> {
  const pathApi = flavour === "posix" ? nodePath.posix : nodePath.win32;
  const reference = flavour === "posix" ? referenceInsidePosix : referenceInsideWin32;
  return {
    id: `isInside.${flavour}`,
    gate: "isInside",
    kind: "guarantee",
    title: `isInside agrees with a component-wise reference under path.${flavour}`,
    needs: ["isInside"],
    consequence: "hardening broken",
    threat: () => "the model's input alone",
    weaknesses: ["CWE-22"],
    arbitrary: flavour === "posix" ? posixPair : win32Pair,
    // Not transcribed: the call is the case, written as the check makes it.
    render: ({ root, path }) => ({ calls: [{ subject: "isInside", call: `isInside(${showValue(root)}, ${showValue(path)}, path.${flavour})` }] }),
    async check(target, { root, path }) {
      const expected = reference(root, path);
      const actual = target.isInside!(root, path, pathApi);
      if (actual !== expected) violation(`answered ${String(actual)}; ${path} is ${expected ? "inside" : "outside"} ${root}`, expected ? "convention differs" : undefined);
    },
  };
}

export const isInsidePosix = isInsideProperty("posix");
export const isInsideWin32 = isInsideProperty("win32");
