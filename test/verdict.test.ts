// The default verdict fails on harm and broken defences and warns on the chapter's conventions:
// the runner keeps searching past a departure, so a convention never hides harm, and --strict (or a
// baseline) makes a departure fail the run.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AuditProperty, Departures, violation } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { createSandbox } from "../src/kit/sandbox/sandbox.js";
import { cli } from "./support/cli.js";

const target = { label: "m.mjs", isInside: () => true };

/** A property over numbers whose check `judge` decides; the runs it saw are recorded in `seen`. */
function example(judge: (value: number) => void, seen: number[] = []): AuditProperty<number> {
  return {
    id: "example.departures",
    gate: "isInside",
    kind: "guarantee",
    title: "an example that departs from a convention",
    needs: ["isInside"],
    consequence: "hardening broken",
    threat: () => "the model's input alone",
    arbitrary: fc.nat({ max: 1_000 }),
    render: String,
    check: async (_target, value) => {
      seen.push(value);
      judge(value);
    },
  };
}

describe("shrinking", () => {
  // containment.read of @modelcontextprotocol/server-filesystem 2025.3.28, seed 1: the first failing
  // case read a sibling's secret and waited on a FIFO; shrinking took a smaller case that only waited,
  // so the escape was reported without a counterexample of its own.
  it("keeps the gravest tier it met: a candidate of a lesser one does not stand in for an escape", async () => {
    const property = example((value) => {
      if (value >= 100) violation(`read the outside at ${value}`, "outside read");
      if (value > 5) violation(`waited at ${value}`, "unavailable");
    });
    // Seed 1 fails first at 602, an escape.
    const result = await runProperty(property, target, { seed: 1, runs: 100 });
    expect(result).toMatchObject({ status: "failed", consequence: "outside read", reason: "read the outside at 100", counterexample: "100", alsoSeen: ["unavailable"] });
  });
});

describe("the threat a failure needs", () => {
  // The same run: stripped of its links, the case still waited on its FIFO, and the escape that
  // needed a link was said to need a special file.
  it("is judged by a lesser case that fails as gravely, not by one that fails otherwise", async () => {
    type Planted = { planted: readonly ("link" | "fifo")[] };
    const property: AuditProperty<Planted> = {
      id: "example.threat",
      gate: "workspacePath",
      kind: "guarantee",
      title: "an example whose escape needs a link beside a FIFO",
      needs: ["isInside"],
      consequence: "hardening broken",
      threat: ({ planted }) => (planted.includes("link") ? "a link inside the workspace" : planted.includes("fifo") ? "a special file inside the workspace" : "the model's input alone"),
      lesserCases: () => [{ planted: [] }, { planted: ["fifo"] }, { planted: ["link"] }],
      arbitrary: fc.constant({ planted: ["link", "fifo"] as const }),
      render: ({ planted }) => planted.join(", "),
      check: async (_target, { planted }) => {
        if (planted.includes("link")) violation("read the outside through a link", "outside read");
        if (planted.includes("fifo")) violation("waited on a FIFO", "unavailable");
      },
    };
    const result = await runProperty(property, target, { seed: 1, runs: 1 });
    expect(result).toMatchObject({ status: "failed", consequence: "outside read", threat: "a link inside the workspace" });
  });

  // A slow server's lesser cases took a minute past a 15 s budget.
  it("is not judged past a time budget's deadline: the case's own threat stands, more than it may need, never less", async () => {
    const judged: string[][] = [];
    const property: AuditProperty<{ planted: string[] }> = {
      id: "example.threatOnTime",
      gate: "workspacePath",
      kind: "guarantee",
      title: "an example whose lesser cases the budget has no room for",
      needs: ["isInside"],
      consequence: "hardening broken",
      threat: ({ planted }) => (planted.length === 0 ? "the model's input alone" : "a link inside the workspace"),
      lesserCases: () => [{ planted: [] }],
      arbitrary: fc.constant({ planted: ["link"] }),
      render: ({ planted }) => planted.join(", "),
      check: async (_target, { planted }) => {
        judged.push(planted);
        violation("read the outside", "outside read");
      },
    };
    const result = await runProperty(property, target, { seed: 1, runs: 1, shrinkDeadlineMs: 0 });
    expect(result).toMatchObject({ status: "failed", threat: "a link inside the workspace" });
    expect(judged).toEqual([["link"]]);
  });
});

describe("a departure from a convention", () => {
  it("does not end the search: a later run that breaks a defence is the finding, the departure beside it", async () => {
    let runs = 0;
    const property = example((value) => {
      runs += 1;
      if (runs > 5 && value > 10) violation(`broke a defence at ${value}`);
      violation(`departed at ${value}`, "convention differs");
    });
    const result = await runProperty(property, target, { seed: 1, runs: 50 });
    expect(result).toMatchObject({ status: "failed", consequence: "hardening broken", alsoSeen: ["convention differs"] });
    // Shrunk as the defence it broke, never down to a case that only departs.
    expect(result.reason).toMatch(/^broke a defence at \d+$/);
    expect(Number(result.counterexample)).toBe(11);
  });

  it("is the finding when nothing graver failed: shrunk, counted, and replayed by its path", async () => {
    const seen: number[] = [];
    const property = example((value) => {
      if (value >= 7) violation(`departed at ${value}`, "convention differs");
    }, seen);
    const result = await runProperty(property, target, { seed: 4, runs: 30 });
    expect(result).toMatchObject({ status: "failed", consequence: "convention differs", counterexample: "7", reason: "departed at 7", runs: 30, cases: 30 });
    const replay = await runProperty(property, target, { seed: 4, runs: 30, path: result.path as string });
    expect(replay).toMatchObject({ status: "failed", counterexample: "7" });
  });

  it("is settled after the rest of its case, so that a graver breach later in the case is the one reported", async () => {
    const box = await createSandbox("workspace-gates-verdict-");
    try {
      const departures = new Departures();
      departures.note(box, `refused ${box.root}/a`);
      const graver = (() => {
        try {
          violation("accepted an escape");
        } catch (error) {
          return error;
        }
      })();
      expect(graver).toMatchObject({ message: "accepted an escape", consequence: undefined });
      expect(() => departures.settle()).toThrow(expect.objectContaining({ message: "refused $BOX/ws/a", consequence: "convention differs" }));
    } finally {
      await box.dispose();
    }
  });
});

describe("the default verdict and --strict", () => {
  const dotdot = ["audit", "fixtures/vulnerable/starts-with-dotdot.ts", "--only", "isInside.posix,isInside.win32", "--seed", "1", "--runs", "100"];

  it("passes an over-strict fork by default, naming its departure as a warning, and fails it with --strict", async () => {
    const plain = await cli(dotdot);
    expect(plain.code, plain.stdout).toBe(0);
    expect(plain.stdout).toMatch(/^isInside\s+isInside\.posix\s+warning\s/m);
    expect(plain.stdout).toContain("warnings, which do not fail the run (the reference's conventions, departed from with no harm seen; --strict fails on them): isInside.posix (convention differs)\n");
    const strict = await cli([...dotdot, "--strict"]);
    expect(strict.code, strict.stdout).toBe(1);
    expect(strict.stdout).toMatch(/^isInside\s+isInside\.posix\s+FAILED\s/m);
  }, 60_000);

  it("fails a fork that calls an outside path inside whatever the rule, since that breaks the check", async () => {
    const { code, stdout } = await cli(["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "isInside.posix", "--seed", "1", "--runs", "100"]);
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/isInside\.posix\s+FAILED[^]*?consequence: hardening broken/);
  }, 60_000);

  it("refuses --strict beside --fail-on (exit 2), naming both", async () => {
    const { code, stderr } = await cli(["audit", "--strict", "--fail-on", "unavailable", "--only", "isInside.posix"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^audit: --strict and --fail-on are two verdicts: give one/);
  });
});
