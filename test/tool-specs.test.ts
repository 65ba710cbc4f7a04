// What the model is told about each tool (gate 1): the provider receives these specs verbatim, so a
// changed name, required field or description changes what the model sends.
import { describe, expect, it } from "vitest";
import { tmpdir } from "node:os";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";

describe("the specs createWorkspaceTools hands to the model", () => {
  it("describe read, write and bash with the chapter's closed input schemas", () => {
    const specs = createWorkspaceTools(tmpdir()).map((tool) => tool.spec);
    expect(specs).toEqual([
      {
        name: "read",
        description:
          "Read a UTF-8 text file inside the workspace. Files over 16000 characters come back as the first and last 8000 characters with a [truncated N characters] marker between them.",
        inputSchema: {
          type: "object",
          properties: { path: { type: "string", description: "File path, relative to the workspace root." } },
          required: ["path"],
          additionalProperties: false,
        },
      },
      {
        name: "write",
        description: "Create or replace a UTF-8 text file inside the workspace. Missing parent directories are created.",
        inputSchema: {
          type: "object",
          properties: {
            path: { type: "string", description: "File path, relative to the workspace root." },
            content: { type: "string", description: "The complete new content of the file." },
          },
          required: ["path", "content"],
          additionalProperties: false,
        },
      },
      {
        name: "bash",
        description:
          "Run a shell command with the workspace root as working directory. Killed after 10000 ms or 65536 bytes of output on either stream; stdout and stderr come back together.",
        inputSchema: {
          type: "object",
          properties: { command: { type: "string", description: "The command, run as $SHELL -c command." } },
          required: ["command"],
          additionalProperties: false,
        },
      },
    ]);
  });

  it("tell the model the bash limits actually configured", () => {
    const bash = createWorkspaceTools(tmpdir(), { bash: { timeoutMs: 500, maxBuffer: 1024 } })[2];
    expect(bash?.spec.description).toContain("Killed after 500 ms or 1024 bytes of output on either stream");
  });
});
