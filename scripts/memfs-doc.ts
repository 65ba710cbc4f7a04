// `npm run memfs-doc`: measures where memfs and the disk disagree, replays the kill matrix's forks
// against both, and writes docs/memfs.md. Run it on Linux as root after a memfs upgrade, and commit it.
import { writeFile } from "node:fs/promises";
import { VULNERABLE_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { replayDivergences } from "../src/kit/memfs/divergence.js";
import { MEMFS_DOC, memfsVersion, renderMemfsDoc } from "../src/kit/memfs/doc.js";
import { lessonTargets, runLesson } from "../src/kit/memfs/lesson.js";

const lesson = await runLesson(await lessonTargets(VULNERABLE_VARIANTS.map((variant) => variant.module)));
await writeFile(MEMFS_DOC, renderMemfsDoc(await replayDivergences(), lesson, memfsVersion()));
process.stdout.write(`wrote ${MEMFS_DOC}\n`);
