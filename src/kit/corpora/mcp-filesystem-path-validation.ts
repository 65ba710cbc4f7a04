/**
 * The rows of the official MCP filesystem server's path-validation.test.ts (mcp-filesystem.ts says how
 * its tests map onto the kit): string checks under POSIX and Windows rules, and the trees its
 * validatePath builds.
 */
import { accepted, accepts, ALLOWED_FORBIDDEN, BY_NAME, ESCAPE, inside, NUL_IN_WORKSPACE_PATH, P, REFUSED, REFUSED_BY_CHECK, refuses, ROOT_RESOLVED_FIRST, testFile } from "./mcp-filesystem-rows.js";

// path-validation.test.ts, on the main branch.
export const pathValidation = testFile("path-validation", "8f2e9cc67884ccf57d8491da1475ef1baff3271c");
pathValidation.lexical("allows exact directory match", "posix", [P], [[P, true]]);
pathValidation.lexical("allows subdirectories", "posix", [P], [[`${P}/src`, true], [`${P}/src/index.js`, true], [`${P}/deeply/nested/file.txt`, true]]);
pathValidation.lexical("blocks similar directory names (prefix vulnerability)", "posix", [P], [
  [`${P}2`, false],
  [`${P}_backup`, false],
  [`${P}-old`, false],
  [`${P}ile`, false],
  [`${P}.bak`, false],
]);
pathValidation.lexical("blocks paths outside allowed directories", "posix", [P], [["/srv/user/other", false], ["/etc/passwd", false], ["/srv/user", false], ["/", false]]);
pathValidation.lexical("handles multiple allowed directories", "posix", ["/srv/user/project1", "/srv/user/project2"], [
  ["/srv/user/project1/src", true],
  ["/srv/user/project2/src", true],
  ["/srv/user/project3", false],
  ["/srv/user/project1_backup", false],
  ["/srv/user/project2-old", false],
]);
pathValidation.lexical("blocks parent and sibling directories", "posix", ["/test/allowed"], [["/test", false], ["/", false], ["/test/allowed_sibling", false], ["/test/allowed2", false]]);
pathValidation.lexical("handles paths with special characters", "posix", ["/srv/user/my-project (v2)"], [
  ["/srv/user/my-project (v2)", true],
  ["/srv/user/my-project (v2)/src", true],
  ["/srv/user/my-project (v2)_backup", false],
  ["/srv/user/my-project", false],
]);
pathValidation.lexical("rejects empty inputs", "posix", [P], [["", false]]);
pathValidation.lexical("rejects empty inputs", "posix", [], [[P, false]]);
pathValidation.lexical("handles trailing separators correctly", "posix", [P], [[`${P}/`, true]]);
pathValidation.lexical("handles trailing separators correctly", "posix", [`${P}/`], [[P, true], [`${P}/`, true], [`${P}2`, false]]);
pathValidation.lexical("handles trailing separators correctly", "posix", [P], [[`${P}2`, false], [`${P}2/`, false]]);
pathValidation.lexical("skips empty directory entries in allowed list", "posix", ["", P, ""], [[P, true], [`${P}/src`, true], ["/srv/user/other", false]]);
pathValidation.lexical("handles Windows paths with trailing separators", "win32", ["C:\\Users\\project"], [["C:\\Users\\project\\", true]]);
pathValidation.lexical("handles Windows paths with trailing separators", "win32", ["C:\\Users\\project\\"], [["C:\\Users\\project", true], ["C:\\Users\\project\\", true]]);
pathValidation.lexical("handles Windows paths with trailing separators", "win32", ["C:\\Users\\project"], [["C:\\Users\\project2\\", false]]);
pathValidation.lexical("normalizes relative paths to absolute", "posix", ["$CWD"], [["relative/path", true], ["./file", true]]);
pathValidation.lexical("normalizes relative paths to absolute", "posix", [P], [["../parent", false]]);
pathValidation.lexical("returns false for relative paths in allowed directories", "posix", ["relative/path", "/some/other/absolute/path"], [
  ["/some/other/absolute/path/file", true],
  ["/absolute/path/file", false],
]);
pathValidation.lexical("handles unicode characters in paths", "posix", ["/srv/user/café"], [
  ["/srv/user/café", true],
  ["/srv/user/café/file", true],
  ["/srv/user/cafe\u0301", false],
]);
pathValidation.lexical("handles paths with spaces correctly", "posix", ["/srv/user/my project"], [
  ["/srv/user/my project", true],
  ["/srv/user/my project/file", true],
  ["/srv/user/my", false],
  ["/srv/user/my proj", false],
]);
pathValidation.lexical("handles nested allowed directories correctly", "posix", ["/srv", "/srv/user", P], [
  ["/srv/anything", true],
  ["/srv/user/anything", true],
  [`${P}/anything`, true],
  ["/srv/other/deep/path", true],
]);
pathValidation.lexical("handles root directory as allowed", "posix", ["/"], [["/", true], ["/any/path", true], ["/etc/passwd", true], ["/srv/user/secret", true]]);
pathValidation.lexical("handles root directory as allowed", "win32", ["/"], [["D:\\other", false]]);
pathValidation.lexical("handles Windows-style paths on Windows", "win32", ["C:\\Users\\project"], [
  ["C:\\Users\\project", true],
  ["C:\\Users\\project\\src", true],
  ["C:\\Users\\project2", false],
  ["C:\\Users\\project_backup", false],
]);
pathValidation.lexical("handles Unix-style paths on Unix", "posix", [P], [[P, true], [`${P}/src`, true], [`${P}2`, false]]);
pathValidation.lexical("blocks path traversal attempts", "posix", [P], [
  [`${P}/../../../etc/passwd`, false],
  [`${P}/../../other`, false],
  [`${P}/../project2`, false],
  [`${P}/src/../../project2`, false],
  [`${P}/./../../other`, false],
  [`${P}/../project/../../../etc`, false],
]);
pathValidation.lexical("blocks traversal in allowed directories", "posix", ["/srv/user/project/../safe"], [["/srv/user/safe/file", true], [`${P}/file`, false]]);
pathValidation.lexical("handles complex traversal patterns", "posix", [P], [
  [`${P}/..test`, true],
  [`${P}/test..`, true],
  [`${P}/te..st`, true],
  [`${P}/../test`, false],
  [`${P}/..`, false],
]);
pathValidation.lexical("rejects paths with null bytes", "posix", [P], [
  [`${P}\x00/etc/passwd`, false],
  [`${P}/test\x00.txt`, false, NUL_IN_WORKSPACE_PATH],
  [`\x00${P}`, false],
  [`${P}/\x00`, false, NUL_IN_WORKSPACE_PATH],
]);
pathValidation.lexical("rejects allowed directories with null bytes", "posix", [`${P}\x00`], [[P, false], [`${P}/file`, false]]);
pathValidation.lexical("allows percent signs in filenames", "posix", [P], [
  [`${P}/report_50%.pdf`, true],
  [`${P}/Q1_25%_growth`, true],
  [`${P}/%41`, true],
  [`${P}/%2e%2e`, true],
  [`${P}/file%20name`, true],
]);
pathValidation.lexical("handles percent signs in allowed directories", "posix", ["/srv/user/project%20files"], [
  ["/srv/user/project%20files/test", true],
  ["/srv/user/project files/test", false],
]);
pathValidation.lexical("normalizes paths before comparison", "posix", [P], [
  [`${P}/`, true],
  [`${P}//`, true],
  [`${P}///`, true],
  [`${P}/./src`, true],
  ["/srv/user/./project/src", true],
  [`${P}//src//file`, true],
  ["/srv//user//project//src", true],
  ["/srv/user//project2", false],
]);
pathValidation.lexical("handles mixed separators correctly", "win32", ["C:\\Users\\project"], [
  ["C:/Users/project", true],
  ["C:\\Users/project\\src", true],
  ["C:/Users\\project/src", true],
]);
pathValidation.lexical("handles very long paths", "posix", [P], [
  [`${P}/${"a/".repeat(1000)}file.txt`, true],
  [`${P}/${"a/".repeat(1000)}${"../".repeat(1001)}etc/passwd`, false],
]);
pathValidation.lexical("handles allowed directories with traversal that normalizes safely", "posix", ["/srv/user/../user/project"], [
  [`${P}/file`, true],
  ["/srv/user/other", false],
]);
pathValidation.lexical("handles symbolic dots in filenames", "posix", [P], [[`${P}/.`, true], [`${P}/..`, false], [`${P}/...`, true], [`${P}/....`, true]]);
pathValidation.lexical("handles UNC paths on Windows", "win32", ["\\\\server\\share\\project"], [
  ["\\\\server\\share\\project", true],
  ["\\\\server\\share\\project\\file", true],
  ["\\\\server\\share\\other", false],
  ["\\\\other\\share\\project", false],
]);

pathValidation.tree("validates symlink handling", {
  tree: [...ALLOWED_FORBIDDEN, "forbidden/target.txt", "allowed/bad-link => $ABS/forbidden/target.txt"],
  root: "allowed",
  tool: "read",
  path: "$ABS/allowed/bad-link",
  upstream: refuses("the link's real path is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
pathValidation.tree("handles non-existent paths correctly", {
  tree: [...ALLOWED_FORBIDDEN, "allowed/subdir/"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/subdir/newfile.txt",
  upstream: accepts("allowed/subdir/newfile.txt"),
  chapter: inside("allowed/subdir/newfile.txt", "the nearest existing ancestor, subdir, is inside"),
});
pathValidation.tree("validates symlinked files consistently between path and resolved forms", {
  tree: [...ALLOWED_FORBIDDEN, "forbidden/target.txt", "allowed/link-to-target.txt => $ABS/forbidden/target.txt"],
  root: "allowed",
  tool: "read",
  path: "$ABS/allowed/link-to-target.txt",
  upstream: refuses("the resolved path is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
const ALIASED_ROOT = ["actual-target/file.txt", "symlink-dir => $ABS/actual-target"];
pathValidation.tree("validates paths correctly when allowed directory is resolved from symlink", {
  tree: ALIASED_ROOT,
  root: "actual-target",
  tool: "read",
  path: "$ABS/symlink-dir/file.txt",
  upstream: accepts("actual-target/file.txt"),
  chapter: { outcome: ESCAPE, why: "symlink-dir is not the root's real path, so the request leaves the root by name", difference: BY_NAME },
  verified: { outcome: ESCAPE, why: "the chapter's check runs first and refuses it by name", difference: BY_NAME },
});
pathValidation.tree("validates paths correctly when allowed directory is resolved from symlink", {
  tree: ALIASED_ROOT,
  root: "actual-target",
  tool: "read",
  path: "$ABS/actual-target/file.txt",
  upstream: accepts("actual-target/file.txt"),
  chapter: inside("actual-target/file.txt"),
});
pathValidation.tree("validates paths correctly when allowed directory is resolved from symlink", {
  tree: ALIASED_ROOT,
  root: "symlink-dir",
  tool: "read",
  path: "$ABS/actual-target/file.txt",
  upstream: refuses("an allowed directory kept as its symlinked spelling does not hold the resolved file (the test calls this incorrect)"),
  chapter: { outcome: accepted("actual-target/file.txt"), why: "the root's real path is actual-target, and the request is below it", difference: ROOT_RESOLVED_FIRST },
  verified: { outcome: accepted("actual-target/file.txt"), why: "the pinned root's real path is actual-target, and the request spells it", difference: ROOT_RESOLVED_FIRST },
});
pathValidation.tree("allows paths through both original and resolved symlink directories", {
  tree: ALIASED_ROOT,
  root: "symlink-dir",
  tool: "read",
  path: "$ABS/symlink-dir/file.txt",
  upstream: accepts("actual-target/file.txt"),
  chapter: inside("actual-target/file.txt", "symlink-dir is the spelling the root was handed over as, taken for its real path"),
});
pathValidation.tree("allows paths through both original and resolved symlink directories", {
  tree: ALIASED_ROOT,
  root: "symlink-dir",
  tool: "read",
  path: "$ABS/actual-target/file.txt",
  upstream: accepts("actual-target/file.txt"),
  chapter: inside("actual-target/file.txt", "the request is the root's real path"),
});
pathValidation.tree("resolves nested symlink chains completely", {
  tree: [
    ...ALLOWED_FORBIDDEN,
    "forbidden/target-file.txt",
    "intermediate-link1 => $ABS/forbidden/target-file.txt",
    "intermediate-link2 => $ABS/intermediate-link1",
    "allowed/seemingly-safe-file => $ABS/intermediate-link2",
  ],
  root: "allowed",
  tool: "read",
  path: "$ABS/allowed/seemingly-safe-file",
  upstream: refuses("the fully resolved chain is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
pathValidation.tree("validates non-existent file paths based on parent directory", {
  tree: [...ALLOWED_FORBIDDEN, "forbidden/target.txt"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/test.txt",
  upstream: accepts("allowed/test.txt"),
  chapter: inside("allowed/test.txt", "the parent, the root itself, is inside"),
});
const LINK_TO_OUTSIDE_FILE = [...ALLOWED_FORBIDDEN, "forbidden/target.txt", "allowed/test.txt => $ABS/forbidden/target.txt"];
pathValidation.tree("demonstrates symlink race condition allows writing outside allowed directories", {
  tree: LINK_TO_OUTSIDE_FILE,
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/test.txt",
  upstream: refuses("once the link exists, the resolved path is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
pathValidation.tree("validates directory creation timing", {
  tree: [...ALLOWED_FORBIDDEN, "allowed/newdir => $ABS/forbidden"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/newdir/file.txt",
  upstream: refuses("once newdir is a link, its resolved path is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
pathValidation.tree("should use resolved parent paths for non-existent files", {
  tree: [...ALLOWED_FORBIDDEN, "allowed/link => $ABS/forbidden"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/link/newfile.txt",
  upstream: refuses("the resolved parent is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
pathValidation.tree("demonstrates parent directory symlink traversal", {
  tree: [...ALLOWED_FORBIDDEN, "allowed/sub1 => $ABS/forbidden"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/sub1/sub2/file.txt",
  upstream: refuses("the real path is under forbidden"),
  chapter: { outcome: ESCAPE, why: "the nearest existing ancestor, sub1, resolves outside" },
  verified: REFUSED_BY_CHECK,
});
pathValidation.tree("should allow overwrites to legitimate files within allowed directories", {
  tree: [...ALLOWED_FORBIDDEN, "allowed/legit-file.txt"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/legit-file.txt",
  upstream: accepts("allowed/legit-file.txt"),
  chapter: inside("allowed/legit-file.txt"),
});
pathValidation.tree("should handle symlinks that point within allowed directories", {
  tree: [...ALLOWED_FORBIDDEN, "allowed/target.txt", "allowed/symlink.txt => $ABS/allowed/target.txt"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/symlink.txt",
  upstream: accepts("allowed/target.txt"),
  chapter: inside("allowed/target.txt", "the link exists, and its real path is inside: the write goes through it"),
  verified: inside("allowed/target.txt", "the link's absolute text spells the root's real path, so the walk restarts at the root and opens target.txt"),
});
pathValidation.tree("should prevent overwriting files through symlinks pointing outside allowed directories", {
  tree: [...ALLOWED_FORBIDDEN, "forbidden/target.txt", "allowed/existing.txt => $ABS/forbidden/target.txt"],
  root: "allowed",
  tool: "write",
  path: "$ABS/allowed/existing.txt",
  upstream: refuses("the link's real path is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
pathValidation.tree("demonstrates race condition in read operations", {
  tree: [...ALLOWED_FORBIDDEN, "forbidden/secret.txt", "allowed/readable.txt => $ABS/forbidden/secret.txt"],
  root: "allowed",
  tool: "read",
  path: "$ABS/allowed/readable.txt",
  upstream: refuses("once the file is a link, its real path is outside"),
  chapter: REFUSED,
  verified: REFUSED_BY_CHECK,
});
