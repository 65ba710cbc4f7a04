// A server that dies mid-audit (fixtures/mcp/tools-server.ts --die-on-climb: it ends at any path with
// a `..` segment): the finding says how it ended and what it last wrote on stderr, and a failure found
// stands in the verdict whatever else the server did.
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import type { AuditProperty } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { PastDeadline, leaveUnjudged, recordCall } from "../src/kit/operations/surface.js";
import { connectServer } from "../src/kit/mcp/client.js";
import { TargetStopped } from "../src/kit/operations/target.js";
import { cli } from "./support/cli.js";
import { served } from "./support/tools-server.js";

const MAPPING_FILE = "fixtures/mcp/tools-server.json";
const CLIMB_LINE = /its stderr ends with: tools-server: (read|write) got a path that climbs \([^)]*\.\.[^)]*\); ending: /;
// A property whose cases lay out no special file: under load, a read of a FIFO can outlast its bound
// first, which is a finding too, but not the one these tests are about.
const PROPERTY = "sequences.bash";

let scratch: string;
beforeAll(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), "workspace-gates-mcp-dying-")));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** An audit of `PROPERTY` against the dying server, its JSON report read back. */
async function auditDying(name: string, ...serverFlags: string[]) {
  const json = join(scratch, `${name}.json`);
  const run = await cli(["audit", "--runs", "5", "--seed", "1", "--only", PROPERTY, "--json", json, "--mcp", "--mapping", MAPPING_FILE, "--", ...served("reference", ...serverFlags)]);
  const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
  return { ...run, result: report.results.find((result) => result.id === PROPERTY) };
}

describe("a server that dies mid-audit", () => {
  it("is a finding that names its exit status and the end of its stderr", { timeout: 120_000 }, async () => {
    const { code, stdout, result } = await auditDying("exit", "--die-on-climb", "7");
    expect(result?.status).toBe("failed");
    expect(result?.consequence).toBe("unavailable");
    expect(result?.reason).toMatch(/the MCP server exited \(exit status 7\) during a call to (read|write)/);
    expect(result?.reason).toMatch(CLIMB_LINE);
    expect(stdout).toMatch(/exit status 7/);
    expect(code).toBe(1);
  });

  it("is a finding that names the signal that ended it", { timeout: 120_000 }, async () => {
    const { code, result } = await auditDying("signal", "--die-on-climb", "SIGKILL");
    expect(result?.reason).toMatch(/the MCP server exited \(killed by SIGKILL\) during a call to (read|write)/);
    expect(result?.reason).toMatch(CLIMB_LINE);
    expect(code).toBe(1);
  });

  it("that leaves a call unanswered is named with the end of its stderr", { timeout: 60_000 }, async () => {
    const root = await mkdtemp(join(scratch, "hang-"));
    const connection = await connectServer(served("reference", "--die-on-climb", "hang"), root);
    try {
      const stopped = await connection.call("read", { path: "../secret.txt" }, 1_000).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(stopped).toBeInstanceOf(TargetStopped);
      expect((stopped as TargetStopped).how).toBe("hung");
      expect((stopped as TargetStopped).message).toMatch(/read got no answer within 1000 ms/);
      expect((stopped as TargetStopped).message).toMatch(CLIMB_LINE);
    } finally {
      await connection.close();
    }
  });
});

describe("a failure found while the server also had trouble of its own", () => {
  it("stands: exit 1, not 2, and the trouble is still said (the server died once while the audit measured its pace)", { timeout: 120_000 }, async () => {
    const once = join(scratch, "died-while-paced");
    const json = join(scratch, "both.json");
    const { code, stderr } = await cli([
      "audit", "--runs", "5", "--seed", "1", "--only", PROPERTY, "--json", json, "--mcp", "--mapping", MAPPING_FILE, "--",
      ...served("reference", "--exit-after", "2", "--once", once, "--die-on-climb", "7"),
    ]);
    expect(await readFile(once, "utf8")).toBe("exited once\n");
    const result = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results.find((candidate) => candidate.id === PROPERTY);
    expect(result?.status).toBe("failed");
    expect(result?.counterexample).not.toBe("(none)");
    expect(stderr).toMatch(/^audit: the target stopped answering while the audit measured how fast it answers/m);
    expect(stderr).toMatch(/^audit: sequences\.bash failed with a counterexample, which stands whatever the target's own trouble: exit 1$/m);
    expect(code).toBe(1);
  });
});

describe("a case in which the target stopped, done again past the case's deadline", () => {
  it("is cut, not the target's own trouble: the second try made no call that could stop it (regression: a server that dies at any .. read as trouble of its own)", async () => {
    let tries = 0;
    const property: AuditProperty<number> = {
      id: "test.stoppedThenCut",
      gate: "workspacePath",
      kind: "guarantee",
      title: "a case whose first try stops the target and outlasts the deadline",
      needs: [],
      consequence: "unavailable",
      threat: () => "the model's input alone",
      arbitrary: fc.constant(0),
      check: async () => {
        tries += 1;
        if (tries === 1) {
          await new Promise((resolve) => setTimeout(resolve, 60));
          throw new TargetStopped("the MCP server exited (exit status 7) during a call to read", "exited");
        }
        // As the containment properties do: a call refused past the deadline leaves its case unjudged.
        try {
          recordCall("read");
        } catch (error) {
          if (!(error instanceof PastDeadline)) throw error;
          leaveUnjudged(1);
        }
      },
      render: String,
    };
    const result = await runProperty(property, { label: "a target that stopped once" }, { seed: 1, runs: 1, caseDeadlineMs: 20 });
    expect(tries).toBe(2);
    expect(result.targetTrouble).toBeUndefined();
    expect(result.status).toBe("passed");
    expect(result.cutShort).toBe(true);
    expect(result.unjudged).toBeGreaterThan(0);
  });
});
