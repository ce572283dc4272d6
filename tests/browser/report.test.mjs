// Real-browser test of the HTML report (mt-html, as `mt report --html` and
// `mt diff --html` write it): Debian's chromium, headless, driven by playwright-core
// (installed into build/browser by `sh mk/deps.sh browser`).
//
// Input: report-phases.unwound, hand-written mt-unwind text of three phases (rate 100,
// every allocation 100 bytes, one sample point each): temp_site allocates 30 blocks and
// frees each at once (t 0..0.29 s from the first event), peak_site 20 blocks live together
// from 1.0..1.19 s to 2.0 s, leak_site 10 blocks and rare_site 3 live to the end (3.0 s).
// The real mt-fold folds it (--json, four metrics; the first with --live-buckets 300, whose
// "live_over_time" gives "what was live then", as mt report --html asks); the keys issue 27 adds to mt-fold's
// JSON (timeline, peak, temporary, sizes, lifetimes, reconciliation, peak_/temp_ metrics)
// are written here by hand, following docs/formats/fold-json.md's contract, so the chart
// and the metric switch are tested before that mt-fold exists.  A second page from the
// plain documents checks that each missing view is left out with its one line; a
// CPU page (report-cpu.unwound: 40 cpu-clock samples) its flame graph in ns.
// Screenshots of each view go to build/browser-report/.
//
// Ends with "browser: N passed, N failed"; exit 0 only when nothing failed.
// Env: MT_SRC, MT_BUILD (default $MT_SRC/build), MT_BROWSER_DIR, MT_CHROMIUM.
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, rmSync, existsSync, mkdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const src = resolve(process.env.MT_SRC || ".");
const build = resolve(process.env.MT_BUILD || join(src, "build"));
const browserDir = resolve(process.env.MT_BROWSER_DIR || join(src, "build/browser"));
const chromiumPath = process.env.MT_CHROMIUM || "/usr/bin/chromium";
const shots = join(src, "build/browser-report");
const fold = join(build, "bin/mt-fold"), html = join(build, "bin/mt-html");

let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log("PASS " + name); }
  else { failed++; console.log("FAIL " + name + (detail !== undefined ? ": " + detail : "")); }
}
function finish(code) {
  console.log(`browser: ${passed} passed, ${failed} failed`);
  process.exit(code !== undefined ? code : (failed ? 1 : 0));
}
setTimeout(() => { check("finished within 180 s", false); finish(1); }, 180000).unref();

const work = mkdtempSync(join(tmpdir(), "mt-browser-report-"));
const input = join(src, "tests/browser/report-phases.unwound");
const inputNew = join(src, "tests/browser/report-phases-new.unwound");
const S = 1e9;

function foldJson(metric, file, extra) {
  return JSON.parse(execFileSync(fold, ["--json", "--top", "200", "--metric", metric, ...(extra || []), file],
    { encoding: "utf-8", stdio: ["ignore", "pipe", "inherit"] }));
}
const V = (value, n, lo, hi) => ({ value, n, exact: false, rse: 1 / Math.sqrt(n), lo, hi });

// The documents: real mt-fold output, then the contract's keys on the first.
const metrics = ["alloc_bytes", "alloc_objects", "inuse_bytes", "inuse_objects"];
// the first with "live_over_time" (--live-buckets 300, as mt report --html folds it)
const docs = metrics.map((m, i) => foldJson(m, input, i ? [] : ["--live-buckets", "300"]));
const plainFiles = docs.map((d, i) => { const p = join(work, `plain${i}.json`); writeFileSync(p, JSON.stringify(d)); return p; });
const t = [0, 0.1 * S, 1.2 * S, 1.9 * S, 2.0 * S, 2.6 * S, 3.0 * S];
const series = { t, live: [0, 100, 2000, 2000, 0, 1300, 1300], alloc_bytes: [0, 1000, 5000, 5000, 5000, 6300, 6300],
  rss: [2400, 2500, 4100, 4100, 4000, 4000, 4000], peak: { bytes: 2000, error: 0, time: 1.2 * S } };
const contract = {
  timeline: { time_unit: "ns", start: 1 * S, processes: [{ pid: 700, comm: "phases", points_read: 7,
    ...series, alloc_block_bytes: series.alloc_bytes }], total: series },
  peak: { at: null, bytes: V(2000, 20, 1222, 3089), objects: V(31.6, 20, 19.3, 48.8) },
  temporary: { bytes: V(3000, 30, 2024, 4283), objects: V(47.5, 30, 32, 67.8), share: 3000 / 6300 },
  sizes: [{ lo: 64, hi: 128, objects: V(99.6, 63, 76.5, 127), bytes: V(6300, 63, 4841, 8060) }],
  lifetimes: { ns: [{ lo: 512, hi: 1024, objects: V(47.5, 30, 32, 67.8), bytes: V(3000, 30, 2024, 4283) },
    { lo: 536870912, hi: 1073741824, objects: V(31.6, 20, 19.3, 48.8), bytes: V(2000, 20, 1222, 3089) }],
  allocations_between: [{ lo: 0, hi: 1, objects: V(47.5, 30, 32, 67.8), bytes: V(3000, 30, 2024, 4283) }],
  freed: V(79.1, 50, 58.7, 104), not_freed: V(20.6, 13, 11, 35.2) },
  reconciliation: { peak: { time: 1.2 * S, requested: V(2000, 20, 1222, 3089), block: 2160, rss: 4100 },
    end: { requested: V(1300, 13, 692, 2223), block: 1404, rss: 4000 } },
};
const fullDocs = docs.map((d, i) => i ? d : { ...d, ...contract });
// peak_bytes and temp_bytes: the alloc_bytes document with the stacks the estimators give
const pick = (d, metric, keep, total) => ({ ...d, metric, total,
  stacks: [{ stack: keep[0], value: keep[1], n: keep[2], exact: false }],
  allocation_sites: d.allocation_sites.filter((s) => keep[0].includes(s.site)) });
fullDocs.push(pick(docs[0], "peak_bytes", ["_start;main;phase2;peak_site;malloc", 2000, 20], contract.peak.bytes));
fullDocs.push(pick(docs[0], "temp_bytes", ["_start;main;phase1;temp_site;malloc", 3000, 30], contract.temporary.bytes));
fullDocs.push(pick(docs[1], "peak_objects", ["_start;main;phase2;peak_site;malloc", 31.6, 20], contract.peak.objects));
fullDocs.push(pick(docs[1], "temp_objects", ["_start;main;phase1;temp_site;malloc", 47.5, 30], contract.temporary.objects));
const fullFiles = fullDocs.map((d, i) => { const p = join(work, `full${i}.json`); writeFileSync(p, JSON.stringify(d)); return p; });

const pages = { cpu: join(work, "cpu.html"), full: join(work, "full.html"), plain: join(work, "plain.html"), bare: join(work, "bare.html"), diff: join(work, "diff.html") };
execFileSync(html, ["-o", pages.full, "--title", "mt report: phases", "--capture", "phases.mtz", ...fullFiles]);
execFileSync(html, ["-o", pages.plain, "--title", "plain", ...plainFiles]);
// bare: the first document without its "live_over_time"
const bareFile = join(work, "bare.json");
writeFileSync(bareFile, JSON.stringify({ ...docs[0], live_over_time: undefined }));
execFileSync(html, ["-o", pages.bare, "--title", "bare", bareFile]);
// a CPU capture: 40 cpu-clock samples of 1 ms, hot 30, warm 5, and 5 in a frame named
// "x</script><!--y"; the title "cpu <b>@DATA@</b>" is text, not markup or data
const cpuIn = join(src, "tests/browser/report-cpu.unwound");
const cpuFiles = ["period", "samples"].map((m, i) => { const p = join(work, `cpu${i}.json`);
  writeFileSync(p, JSON.stringify(foldJson(m, cpuIn, i ? [] : ["--live-buckets", "300"]))); return p; });
execFileSync(html, ["-o", pages.cpu, "--title", "cpu <b>@DATA@</b>", ...cpuFiles]);
// the diff: mt-fold --diff, and each side's own document
const diffJson = join(work, "diff.json"), baseJson = join(work, "base.json"), newJson = join(work, "new.json");
writeFileSync(diffJson, execFileSync(fold, ["--json", "--diff", input, inputNew], { stdio: ["ignore", "pipe", "inherit"] }));
writeFileSync(baseJson, JSON.stringify(docs[0]));
writeFileSync(newJson, JSON.stringify(foldJson("alloc_bytes", inputNew)));
execFileSync(html, ["-o", pages.diff, "--title", "mt diff", "--diff", diffJson, "--base", baseJson, "--new", newJson]);
// A null diff with many frames: 240 functions (12 callers of 20 leaves)
// whose sample counts in both runs are Poisson draws of one mean (a seeded
// generator): a per-frame 95% test would colour about 5% of them; the
// per-frame exact tests under Holm's step-down colour none.
pages.nullDiff = join(work, "null-many.diff.html");
{
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  const poisson = (mean) => { let k = 0, p = Math.exp(-mean), c = p, u = rnd(); while (u > c) { k++; p *= mean / k; c += p; } return k; };
  const side = (name) => {
    const lines = ["# mt-unwind 1"];
    let t = 1000;
    for (let c = 0; c < 12; c++)
      for (let l = 0; l < 20; l++)
        for (let k = poisson(6 + (c * 20 + l) % 25); k > 0; k--)
          lines.push(`alloc\t9/9\t${t++}\tnull\tsize=64 ptr=0x${(t * 64).toString(16)} fn=malloc points=1 rate=524288\t_start;main;caller${c};leaf${c}_${l};malloc end=complete`);
    const f = join(work, name + ".unwound");
    writeFileSync(f, lines.join("\n") + "\n");
    return f;
  };
  const b = side("null-base"), n = side("null-new");
  const dj = join(work, "null-diff.json"), bj = join(work, "null-base.json"), nj = join(work, "null-new.json");
  writeFileSync(dj, execFileSync(fold, ["--json", "--diff", b, n], { stdio: ["ignore", "pipe", "inherit"] }));
  writeFileSync(bj, JSON.stringify(foldJson("alloc_bytes", b)));
  writeFileSync(nj, JSON.stringify(foldJson("alloc_bytes", n)));
  execFileSync(html, ["-o", pages.nullDiff, "--prune", "0", "--title", "null diff", "--diff", dj, "--base", bj, "--new", nj]);
}
// A real capture: build/fixtures/fold_phases (churn freed at once, build_peak's 6,000 blocks
// live together at the peak, keep_forever's 750 live at exit), recorded by mt record and
// written by mt report --html; beside it mt-fold's own --json of the same unwound text.
const fixtures = resolve(process.env.MT_FIXTURES || join(build, "fixtures"));
const mt = join(build, "bin/mt"), phasesFx = join(fixtures, "fold_phases");
const real = { page: join(work, "phases.html"), skip: null, fold: null };
{
  const env = { ...process.env, XDG_CACHE_HOME: join(work, "cache"), PATH: join(build, "bin") + ":" + process.env.PATH };
  const mtz = join(work, "phases.mtz");
  let rc = 0, err = "";
  try {
    execFileSync(mt, ["record", "-o", mtz, "--", phasesFx], { env, stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) { rc = e.status; err = String(e.stderr || e.message); }
  if (rc === 125 || /perf_event_open|cannot open perf events/.test(err)) real.skip = "mt record cannot open perf events: " + err.trim().split("\n").pop();
  else if (rc) { check("mt record of fold_phases", false, `exit ${rc}: ${err}`); }
  else {
    execFileSync(mt, ["report", "--html", "-o", real.page, mtz], { env, stdio: ["ignore", "ignore", "inherit"] });
    const text = execFileSync(join(build, "bin/mt-unwind"), ["-q", mtz], { env, maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "inherit"] });
    writeFileSync(join(work, "phases.txt"), text);
    real.fold = foldJson("peak_bytes", join(work, "phases.txt"), ["--live-buckets", "300"]);
    const t = readFileSync(real.page, "utf-8"), tag = '<script type="application/json" id="data">';
    const a = t.indexOf(tag) + tag.length;
    real.data = JSON.parse(t.slice(a, t.indexOf("</script>", a)).replace(/<\\\//g, "</"));
    // two runs of the program that differ only in the sampler's seed: the
    // differential graph must colour nothing (the per-frame tests of
    // mt flame --diff: exact binomial, Holm at 5%)
    const m1 = join(work, "null1.mtz"), m2 = join(work, "null2.mtz");
    for (const [f, seed] of [[m1, "1"], [m2, "2"]])
      execFileSync(mt, ["record", "--rate", "65536", "--seed", seed, "-o", f, "--", phasesFx], { env, stdio: ["ignore", "ignore", "pipe"] });
    real.nullPage = join(work, "null.diff.html");
    execFileSync(mt, ["diff", "--html", "-o", real.nullPage, m1, m2], { env, stdio: ["ignore", "ignore", "inherit"] });
  }
}
check("the page has no URL to fetch (no http:, https:, //host)",
  !/(src|href)\s*=\s*["']?(https?:|\/\/)/i.test(readFileSync(pages.full, "utf-8")));
console.log(`page sizes: full ${statSync(pages.full).size} B, diff ${statSync(pages.diff).size} B`);

let browser = null;
async function main() {
  let chromium;
  try {
    const require = createRequire(join(browserDir, "package.json"));
    ({ chromium } = require("playwright-core"));
  } catch (e) {
    console.log(`cannot load playwright-core from ${browserDir}: ${e.message}`);
    console.log("run: sh mk/deps.sh browser");
    finish(3);
  }
  if (!existsSync(chromiumPath)) { console.log(`no chromium at ${chromiumPath}; run: sh mk/deps.sh browser`); finish(3); }
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launchPersistentContext(join(work, "profile"), {
    executablePath: chromiumPath, headless: true, viewport: { width: 1100, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = browser.pages()[0] || await browser.newPage();
  const errors = [], remote = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("request", (r) => { if (!r.url().startsWith("file:")) remote.push(r.url()); });
  const open = async (p) => { await page.goto(pathToFileURL(p).href); await page.waitForSelector("body[data-ready='1']", { timeout: 10000 }); };

  await open(pages.full);
  check("the page loads with no console error", errors.length === 0, errors.join("; "));
  // frames: found by the name the page keeps on each box (el.mtNode)
  const frame = (sel, name) => page.evaluate(([s, n]) => {
    const f = [...document.querySelectorAll(s + " .fr")].find((e) => e.mtNode.name === n);
    if (!f) return null;
    const r = f.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height, cls: f.className, v: f.mtNode.v };
  }, [sel, name]);
  const widest = (sel, parent) => page.evaluate(([s, p]) => {
    const f = [...document.querySelectorAll(s + " .fr")].find((e) => e.mtNode.name === p);
    const kids = [...f.mtNode.kids.values()].sort((a, b) => b.v - a.v);
    return kids.length ? kids[0].name : null;
  }, [sel, parent]);
  const main = "#flame .flame", live = "#timeline .flame";

  // summary: exact totals beside the estimates, nothing lost, the contract's figures
  const summary = await page.locator("#summary").textContent();
  check("summary names the program and the run", /program phases, capture phases\.mtz, run 3 s/.test(summary), summary.slice(0, 200));
  check("summary puts the exact total beside the estimate (6,300 exact, in interval)",
    /alloc_bytes5\.86 KiB.*6\.15 KiByes/.test(summary.replace(/\s+/g, "")) || /6\.15 KiB/.test(summary), summary.slice(0, 600));
  check("summary says nothing was lost", /nothing lost/.test(summary));
  check("summary gives the exact peak with its time", /exact peak of live bytes: 1\.95 KiB ± 0 B at 1\.2 s/.test(summary));
  check("summary gives the temporaries and their share", /temporary allocations .*2\.93 KiB, 47\.6% of allocated bytes/.test(summary));
  check("summary has the reconciliation (block 2.11 KiB, RSS 4 KiB at the peak)", /at peak \(1\.2 s\)1\.95 KiB \[1\.19 KiB \.\. 3\.02 KiB\]2\.11 KiB4 KiB/.test(summary), summary);
  check("summary: peak_bytes with its interval, once", (summary.match(/peak_bytes/g) || []).length === 1 && /peak_bytes1\.95 KiB1\.19 KiB \.\. 3\.02 KiB20/.test(summary));
  check("no view of the full page is left out", await page.locator("#app .absent").count() === 0,
    await page.locator("#app .absent").allTextContents());
  await page.locator("#summary").screenshot({ path: join(shots, "summary.png") });

  // chart: three exact series and the estimate, the peak marked
  const paths = await page.locator("#chart path").evaluateAll((ps) => ps.map((p) => p.getAttribute("data-series")));
  check("chart draws live, RSS, allocated and the sampled estimate", paths.join(",") ===
    "live (exact),RSS,allocated (cumulative),live (estimate from samples)", paths.join(","));
  check("chart marks the peak", /peak 1\.95 KiB ± 0 B at 1\.2 s/.test(await page.locator("#chart").textContent()));
  // the live graph starts at the peak: peak_site's 20 blocks, 2000 bytes
  let lt = await page.locator("#live-title").textContent();
  check("live graph starts at the peak moment with peak_site's 2,000 bytes", /live at 1\.21 s: 1\.95 KiB/.test(lt) &&
    (await frame(live, "peak_site"))?.v === 2000, lt);
  await page.locator("#timeline").screenshot({ path: join(shots, "timeline-peak.png") });
  // click at 2.8 s of 3 s: 60 + 780 * 2.8 / 3 = 788 px into the 900-px chart (bucket 279
  // or 280 of 300 by the pixel's rounding: the moment shown is 2.8 or 2.81 s)
  const cb = await page.locator("#chart").boundingBox();
  await page.mouse.click(cb.x + 788, cb.y + 100);
  lt = await page.locator("#live-title").textContent();
  const leak = await frame(live, "leak_site");
  check("clicking the chart shows what was live then (leak_site 1000, rare_site 300, no peak_site)",
    /live at 2\.81? s: 1\.27 KiB/.test(lt) && leak && leak.v === 1000 && (await frame(live, "rare_site"))?.v === 300 &&
    !(await frame(live, "peak_site")), lt);
  // a drag over 0..0.3 s: the temporaries, live at some moment in it
  await page.mouse.move(cb.x + 61, cb.y + 100); await page.mouse.down();
  await page.mouse.move(cb.x + 130, cb.y + 100); await page.mouse.up();
  lt = await page.locator("#live-title").textContent();
  check("a drag shows what was live at some moment of the span", /^live at some moment from/.test(lt) &&
    (await frame(live, "temp_site"))?.v > 0, lt);
  // keyboard on the chart: → moves the moment one bucket on
  await page.locator("#chart").focus(); await page.keyboard.press("ArrowRight");
  check("→ on the chart moves the moment", /^live at 0\.0\d s|^live at [\d.]+ (s|ms)/.test(await page.locator("#live-title").textContent()));
  await page.locator("#timeline").screenshot({ path: join(shots, "timeline-click.png") });

  // flame graph: metric switch
  check("alloc_bytes: phase1 (temp_site) is main's widest child", await widest(main, "main") === "phase1");
  const before = await page.locator(main).getAttribute("data-frames");
  await page.locator("#metric button[data-v='inuse_bytes']").click();
  check("switching to inuse_bytes: phase3 (leak_site) widest", await widest(main, "main") === "phase3");
  await page.locator("#metric button[data-v='peak_bytes']").click();
  check("switching to peak_bytes: only phase2 (peak_site) drawn", await widest(main, "main") === "phase2" &&
    !(await frame(main, "phase1")), await page.locator(main).getAttribute("data-frames") + " vs " + before);
  await page.locator("#metric button[data-v='temp_bytes']").click();
  check("switching to temp_bytes: phase1 (temp_site)", await widest(main, "main") === "phase1" && !(await frame(main, "phase3")));
  await page.locator("#metric button[data-v='alloc_bytes']").click();
  await page.locator("#flame").screenshot({ path: join(shots, "flame.png") });

  // hover: the estimate, its samples and interval (Garwood for 10 points, 100 bytes
  // each: 479.5 .. 1839 bytes, what mt-fold --sites prints as [480 B, 1.80 KiB])
  const lk = await frame(main, "leak_site");
  await page.mouse.move(lk.x + lk.w / 2, lk.y + lk.h / 2);
  await page.waitForSelector("#tip:not(.hide)", { timeout: 3000 });
  const tipText = await page.locator("#tip").textContent();
  check("hover text gives estimate, samples and 95% interval",
    /^leak_site\n1000 B, 15\.9% of all\n10 samples, ± 316 B \(±31\.6%, 1σ\), 95%: 480 B \.\. 1\.8 KiB$/.test(tipText), JSON.stringify(tipText));
  check("few-sample frames set apart: rare_site (3) hatched, leak_site (10) not",
    / few/.test((await frame(main, "rare_site")).cls) && !/ few/.test(lk.cls));
  // search
  await page.locator("#flame input.search").fill("site");
  const matches = await page.locator(main + " .fr.match").count();
  const st = await page.locator("#flame .note").first().textContent();
  check("search highlights the 4 sites and says their share (100%)", matches === 4 && /search 'site': 6\.15 KiB, 100\.0% of all/.test(st), matches + " " + st);
  await page.locator("#flame").screenshot({ path: join(shots, "flame-search.png") });
  await page.locator("#flame input.search").fill("");
  // zoom by keyboard: Enter on a focused frame, Escape back
  await page.evaluate(() => [...document.querySelectorAll("#flame .fr")].find((e) => e.mtNode.name === "phase2").focus());
  await page.keyboard.press("Enter");
  const z = await frame(main, "peak_site");
  check("Enter zooms: peak_site spans the graph", z && Math.abs(z.w - (await page.locator(main).boundingBox()).width) < 4, z && z.w);
  await page.keyboard.press("Escape");
  check("Escape resets the zoom", !(await page.locator("#flame .note").first().textContent()).startsWith("zoomed"));
  // bottom-up: malloc on top
  await page.locator("#direction button[data-v='bottom-up']").click();
  check("bottom-up: the root's only child is malloc", await widest(main, "all") === "malloc");
  await page.locator("#direction button[data-v='top-down']").click();

  // tables: sortable, with intervals
  const firstSite = () => page.locator("table.sites tbody tr:first-child td:first-child").textContent();
  check("site table: temp_site first by estimate", await firstSite() === "temp_site");
  await page.locator("table.sites th button", { hasText: "site" }).first().click();
  check("sorting by site name: leak_site first", await firstSite() === "leak_site");
  check("site table shows intervals", /1000 B480 B \.\. 1\.8 KiB/.test((await page.locator("table.sites").textContent()).replace(/\s+/g, "")) ||
    /480 B \.\. 1\.8 KiB/.test(await page.locator("table.sites").textContent()));
  await page.locator("#sites").screenshot({ path: join(shots, "sites.png") });
  check("process and thread tables", await page.locator("table.procs tbody tr").count() === 1 &&
    await page.locator("table.threads tbody tr").count() === 1);
  await page.locator("#procs").screenshot({ path: join(shots, "procs.png") });
  check("size and lifetime histograms", await page.locator("table.hist").count() === 3);
  await page.locator("#hist").screenshot({ path: join(shots, "hist.png") });
  // text is selectable; print hides the controls
  const sel = await page.evaluate(() => { const r = document.createRange(); r.selectNodeContents(document.querySelector("#flame .fr"));
    getSelection().removeAllRanges(); getSelection().addRange(r); return getSelection().toString(); });
  check("frame text is selectable", sel === "all", sel);
  await page.emulateMedia({ media: "print" });
  check("print: controls hidden, graphs kept", await page.locator("#flame .controls").isHidden() && await page.locator(main).isVisible());
  await page.screenshot({ path: join(shots, "print.png"), fullPage: true });
  await page.emulateMedia({ media: "screen" });

  // today's mt-fold: the views it cannot have are left out, one line each
  await open(pages.plain);
  const absent = (await page.locator("#app .absent").allTextContents()).join("\n");
  console.log("plain page leaves out:\n" + absent);
  check("without the contract's keys: one line each for the timeline, peak/temp metrics, reconciliation, sizes, lifetimes",
    /exact live bytes, allocated bytes and RSS over time: not in this input/.test(absent) &&
    /metrics peak_bytes, peak_objects, temp_bytes, temp_objects: not in this input/.test(absent) &&
    /reconciliation/.test(absent) && /size histogram/.test(absent) && /lifetime histogram/.test(absent), absent);
  const p2 = await page.locator("#chart path").evaluateAll((ps) => ps.map((p) => p.getAttribute("data-series")));
  check("without a timeline the chart is the sampled estimate, and clicks still work", p2.join(",") === "live (estimate from samples)");
  const cb2 = await page.locator("#chart").boundingBox();
  await page.mouse.click(cb2.x + 450, cb2.y + 100);
  check("… live at 1.51 s: peak_site", (await frame(live, "peak_site"))?.v === 2000, await page.locator("#live-title").textContent());
  await page.screenshot({ path: join(shots, "plain.png"), fullPage: true });
  await open(pages.bare);
  check("without events: the live view is left out with its line",
    /what was live at a moment: the page was written without/.test((await page.locator("#app .absent").allTextContents()).join("\n")));

  // a CPU capture: its flame graph in ns, no allocation rows
  await open(pages.cpu);
  check("CPU page: the CPU flame graph, hot is main's widest child", (await page.locator("#flame h2").textContent()) === "CPU flame graph" &&
    await widest(main, "main") === "hot");
  const hot = await frame(main, "hot");
  await page.mouse.move(hot.x + hot.w / 2, hot.y + hot.h / 2);
  check("CPU hover: 30 ms of cpu-clock, 30 samples", /^hot\n30 ms, 75\.0% of all\n30 samples, /.test(await page.locator("#tip").textContent()),
    JSON.stringify(await page.locator("#tip").textContent()));
  const cpuSum = await page.locator("#summary table").textContent();
  check("CPU summary: period and samples only", /period40 ms/.test(cpuSum) && !/alloc_bytes/.test(cpuSum), cpuSum);
  check("CPU page: a frame named x</script><!--y is drawn as named", (await frame(main, "x</script><!--y"))?.v === 5e6);
  check("CPU page: the title is text", (await page.locator("#title").textContent()) === "cpu <b>@DATA@</b>" &&
    (await page.title()) === "cpu <b>@DATA@</b>");
  check("CPU page: no live view, one line why", /the capture has no sampled allocations/.test((await page.locator("#app .absent").allTextContents()).join(" ")));
  await page.screenshot({ path: join(shots, "cpu.png"), fullPage: true });

  // the diff page
  await open(pages.diff);
  const dl = await frame("#flame .flame", "leak_site");
  check("diff: leak_site grew significantly (red)", dl && /rgb\(2\d\d, \d+, \d+\)/.test(await page.evaluate(() =>
    getComputedStyle([...document.querySelectorAll("#flame .fr")].find((e) => e.mtNode.name === "leak_site")).backgroundColor)));
  check("diff: peak_site unchanged (grey)", await page.evaluate(() =>
    getComputedStyle([...document.querySelectorAll("#flame .fr")].find((e) => e.mtNode.name === "peak_site")).backgroundColor) === "rgb(217, 217, 217)");
  await page.mouse.move(dl.x + dl.w / 2, dl.y + dl.h / 2);
  check("diff hover: base, new and change with its interval",
    /new 3\.91 KiB \(40 samples\), base 1000 B \(10 samples\)\nchange 2\.93 KiB ± /.test(await page.locator("#tip").textContent()));
  const drows = await page.locator("table.diff tbody tr").allTextContents();
  check("diff table: (all) and 4 sites, leak_site significant", drows.length === 5 && drows.some((r) => /^leak_site.*yes$/.test(r)), drows.join(" / "));
  await page.screenshot({ path: join(shots, "diff.png"), fullPage: true });
  await open(pages.nullDiff);
  const nm = await page.evaluate(() => {
    const fr = [...document.querySelectorAll("#flame .fr")];
    const grey = (e) => getComputedStyle(e).backgroundColor === "rgb(217, 217, 217)";
    return { frames: fr.length, coloured: fr.filter((e) => !grey(e)).length,
      naive: fr.filter((e) => { const n = e.mtNode; const sd = Math.sqrt((n.n ? n.v * n.v / n.n : 0) + (n.nb ? n.vb * n.vb / n.nb : 0));
        return n.v !== n.vb && Math.abs(n.v - n.vb) > 1.96 * sd; }).length };
  });
  check("null diff of 240 functions: no frame coloured, where a per-frame 95% test marks some", nm.frames > 240 && nm.coloured === 0 && nm.naive > 0, JSON.stringify(nm));
  console.log("null diff: " + JSON.stringify(nm));

  // the real capture's page
  if (real.skip) console.log("SKIP real capture of fold_phases: " + real.skip);
  else if (real.data) {
    await open(real.page);
    const D = real.data, tl = D.timeline;
    // the total series as mt-fold wrote it; of each process its peak only
    const ft = real.fold.timeline;
    check("real: the page's timeline is mt-fold's", tl && JSON.stringify(tl.total) === JSON.stringify(ft.total) && tl.total.t.length > 3 &&
      JSON.stringify(tl.processes.map((p) => p.peak)) === JSON.stringify(ft.processes.map((p) => p.peak)) &&
      tl.processes.every((p) => !("t" in p)), tl ? tl.total.t.length : "no timeline");
    const exact = await page.evaluate(() => {
      const p = document.querySelector("#chart path[data-series='live (exact)']");
      if (!p) return null;
      const pts = p.getAttribute("d").split(/[ML]/).filter((s) => s.trim()).map((s) => s.split(",").map(Number));
      const top = pts.reduce((m, q) => (q[1] < m[1] ? q : m), pts[0]);
      const mark = document.querySelector("#peak-mark");
      return { n: pts.length, topX: top[0], markX: mark ? Number(mark.getAttribute("x1")) : null };
    });
    check("real: the memory chart draws the exact live curve, one point per timeline point, its top at the peak mark",
      exact && exact.n === tl.total.t.length && exact.markX != null && Math.abs(exact.topX - exact.markX) < 1, JSON.stringify(exact));
    // the live sites at a click: the flame graph's frames named after the fixture's functions
    const liveSites = () => page.evaluate(() => {
      const out = {};
      for (const e of document.querySelectorAll("#timeline .flame .fr")) {
        const m = /^(churn|build_peak|keep_forever) /.exec(e.mtNode.name);
        if (m) out[m[1]] = (out[m[1]] || 0) + e.mtNode.v;
      }
      return out;
    });
    const widestOf = (o) => Object.keys(o).sort((a, b) => o[b] - o[a])[0] || null;
    // the chart's box where it is now (a screenshot scrolls)
    const clickAt = async (x) => { const box = await page.locator("#chart").boundingBox();
      await page.mouse.click(box.x + x * box.width / 900, box.y + box.height / 2); };
    await clickAt(exact.markX);
    const atPeak = await liveSites(), peakTitle = await page.locator("#live-title").textContent();
    check("real: clicking the chart at the peak shows build_peak as the widest live site",
      widestOf(atPeak) === "build_peak" && !atPeak.churn, JSON.stringify(atPeak) + " " + peakTitle);
    // the page's figure there is mt-fold's: its live_over_time summed at that bucket
    const lot = real.fold.live_over_time, b = Math.min(lot.buckets - 1, Math.floor((exact.markX - 60) / 780 * lot.buckets));
    const at = (pts) => { let v = 0; for (const x of pts) { if (x[0] > b) break; v = x[1]; } return v; };
    const want = lot.stacks.filter((s) => s.stack.split(";").some((f) => /^build_peak\b/.test(f)))
      .reduce((s, r) => s + at(r.live), 0);
    check("real: … build_peak's live bytes there are mt-fold's live_over_time at that bucket", want > 0 && Math.abs(atPeak.build_peak - want) <= 1, `${atPeak.build_peak} vs ${want} (bucket ${b})`);
    await page.locator("#timeline").screenshot({ path: join(shots, "real-phases-peak.png") });
    await clickAt(60 + 780 * 0.995);
    const atEnd = await liveSites();
    check("real: near the end keep_forever is the widest live site", widestOf(atEnd) === "keep_forever" && !atEnd.build_peak,
      JSON.stringify(atEnd) + " " + await page.locator("#live-title").textContent());
    check("real: the metric switch has peak_bytes", await page.locator("#metric button[data-v='peak_bytes']").count() === 1);
    await page.locator("#metric button[data-v='peak_bytes']").click();
    const peakMain = await page.evaluate(() => {
      const out = {};
      for (const e of document.querySelectorAll("#flame .flame .fr")) {
        const m = /^(churn|build_peak|keep_forever) /.exec(e.mtNode.name);
        if (m) out[m[1]] = (out[m[1]] || 0) + e.mtNode.v;
      }
      return out;
    });
    check("real: peak_bytes draws build_peak widest", widestOf(peakMain) === "build_peak", JSON.stringify(peakMain));
    await page.screenshot({ path: join(shots, "real-phases.png"), fullPage: true });
    await open(real.nullPage);
    const nul = await page.evaluate(() => {
      const fr = [...document.querySelectorAll("#flame .fr")];
      return { frames: fr.length, coloured: fr.filter((e) => getComputedStyle(e).backgroundColor !== "rgb(217, 217, 217)").map((e) => e.mtNode.name) };
    });
    check("real: two seeds of one program: the differential graph colours no frame", nul.frames > 5 && nul.coloured.length === 0, JSON.stringify(nul));
    await page.screenshot({ path: join(shots, "real-null-diff.png"), fullPage: true });
  }

  check("no request outside the file", remote.length === 0, remote.join(" "));
  check("no console error on any page", errors.length === 0, errors.join("; "));
}

main().catch((e) => { check("test ran", false, e.stack || String(e)); })
  .finally(async () => { if (browser) await browser.close(); rmSync(work, { recursive: true, force: true }); finish(); });
