// Real-browser test of scripts/mt-flamegraph: Debian's chromium, headless, driven by
// playwright-core (installed into build/browser by `sh mk/deps.sh browser`).
// Renders a known collapsed input, then hovers, zooms, searches and resets like a user,
// checking what the page shows against figures reasoned from the input below.
// Ends with "browser: N passed, N failed"; exit 0 only when nothing failed.
//
// Env: MT_SRC (repo root, default cwd), MT_BROWSER_DIR (default $MT_SRC/build/browser),
// MT_CHROMIUM (default /usr/bin/chromium).
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const src = resolve(process.env.MT_SRC || ".");
const browserDir = resolve(process.env.MT_BROWSER_DIR || join(src, "build/browser"));
const chromiumPath = process.env.MT_CHROMIUM || "/usr/bin/chromium";

let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log("PASS " + name); }
  else { failed++; console.log("FAIL " + name + (detail !== undefined ? ": " + detail : "")); }
}
function finish(code) {
  console.log(`browser: ${passed} passed, ${failed} failed`);
  process.exit(code !== undefined ? code : (failed ? 1 : 0));
}

// The profile: 10,000 bytes in all.  main has 9,000: parse 4,000 (xstrdup 3,000 and
// grow 1,000), build_table 5,000; a leak of 1,000 outside main.  malloc appears under
// xstrdup (3,000), build_table (5,000) and leak (1,000): 9,000 = 90.00% of all.
const folded = [
  "main;parse;xstrdup;malloc 3000",
  "main;parse;grow;realloc 1000",
  "main;build_table;malloc 5000",
  "_start;leak;malloc 1000",
].join("\n") + "\n";
// Sample counts as mt-fold --json gives them (rate 100 bytes: samples = bytes / 100),
// except the leak, backed by 4 samples only: under --few-samples 10 it is hatched.
const stats = {
  metric: "alloc_bytes", mode: "sample", rate: 100,
  stacks: [
    { stack: "main;parse;xstrdup;malloc", samples: 30 },
    { stack: "main;parse;grow;realloc", samples: 10 },
    { stack: "main;build_table;malloc", samples: 50 },
    { stack: "_start;leak;malloc", samples: 4 },
  ],
};

// A hung browser must not hang the build.
setTimeout(() => { check("finished within 120 s", false); finish(1); }, 120000).unref();

const work = mkdtempSync(join(tmpdir(), "mt-browser-"));
const profileDir = join(work, "profile");
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
  if (!existsSync(chromiumPath)) {
    console.log(`no chromium at ${chromiumPath}; run: sh mk/deps.sh browser`);
    finish(3);
  }

  writeFileSync(join(work, "in.folded"), folded);
  writeFileSync(join(work, "stats.json"), JSON.stringify(stats));
  const svgPath = join(work, "fg.svg");
  execFileSync(join(src, "scripts/mt-flamegraph"), [
    "--title", "browser test", "--subtitle", "known input", "--countname", "bytes",
    "--stats", join(work, "stats.json"), "--minwidth", "0", "--width", "1000",
    "-o", svgPath, join(work, "in.folded"),
  ], { stdio: ["ignore", "inherit", "inherit"] });

  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1000, height: 260 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = browser.pages()[0] || await browser.newPage();
  const errors = [], remote = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("request", (r) => { if (!r.url().startsWith("file:")) remote.push(r.url()); });

  await page.goto(pathToFileURL(svgPath).href);
  await page.waitForSelector("svg[data-ready='1']", { timeout: 10000 });
  check("script initialised without errors", errors.length === 0, errors.join("; "));
  const height = await page.evaluate(() => +document.documentElement.getAttribute("height"));
  await page.setViewportSize({ width: 1000, height });

  // Geometry: 1000 px wide, 10 px padding each side: 980 px for all 10,000 bytes.
  const inner = 980;
  // Frames carry no name attribute: find them by the name the page script keeps (g.mt).
  const box = (name, nth = 0) => page.evaluate(([n, k]) => {
    const gs = [...document.querySelectorAll("#frames g.f")].filter((g) => g.mt.name === n);
    const g = gs[k];
    if (!g || g.classList.contains("hide")) return null;
    const r = g.querySelector("rect.b").getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height, cls: g.getAttribute("class") };
  }, [name, nth]);

  const nframes = await page.locator("#frames g.f").count();
  // all, main, parse, xstrdup, malloc, grow, realloc, build_table, malloc, _start, leak, malloc
  check("every frame of the input drawn (12)", nframes === 12, nframes);

  const bt = await box("build_table");
  check("build_table is 5000/10000 of the width",
    bt && Math.abs(bt.w - (inner * 0.5 - 0.5)) < 1, bt && bt.w);

  // Hover: the tooltip shows the full name, human units, percent and the stats.
  await page.mouse.move(bt.x + bt.w / 2, bt.y + bt.h / 2);
  await page.waitForSelector("#tip:not(.hide)", { timeout: 3000 });
  const tipText = await page.locator("#tip text tspan").allTextContents();
  console.log("tooltip: " + tipText.join(" | "));
  check("tooltip names the frame", tipText[0] === "build_table", tipText[0]);
  check("tooltip gives human units and percent",
    /^4\.88 KiB \(5,000 bytes\), 50\.00% of all$/.test(tipText[1] || ""), tipText[1]);
  // 50 samples: relative error 1/sqrt(50) = 14.1%, i.e. +-707 bytes = 707 B.
  check("tooltip gives samples and error",
    tipText.some((l) => /^50 samples, ±707 B \(±14\.1%, 1σ\), 95%: /.test(l)), tipText.join(" | "));
  const details = await page.locator("#details").textContent();
  check("details line follows the hover", details.startsWith("build_table: 4.88 KiB"), details);

  // Few samples: the leak (4 samples) and its parents _start (4) are hatched, main (90) is not.
  const leak = await box("leak");
  const mainb = await box("main");
  const hatched = await page.locator("#frames g.few rect.h").count();
  check("few-sample frames are hatched (_start, leak, malloc)",
    leak && / few/.test(leak.cls) && !/ few/.test(mainb.cls) && hatched === 3,
    `${leak && leak.cls} / ${mainb.cls} / ${hatched}`);

  // Click to zoom on parse (4,000): it fills the width, xstrdup takes 3/4 of it,
  // build_table (outside parse) disappears, main (an ancestor) spans the width.
  const parse = await box("parse");
  check("parse is 4000/10000 of the width before zoom",
    Math.abs(parse.w - (inner * 0.4 - 0.5)) < 1, parse.w);
  await page.mouse.click(parse.x + parse.w / 2, parse.y + parse.h / 2);
  const pz = await box("parse"), xz = await box("xstrdup"), mz = await box("main");
  check("zoomed frame fills the width", pz && Math.abs(pz.w - (inner - 0.5)) < 1, pz && pz.w);
  check("child width changed to 3/4 of the width",
    xz && Math.abs(xz.w - (inner * 0.75 - 0.5)) < 1, xz && xz.w);
  check("frames outside the zoom hidden", (await box("build_table")) === null);
  check("ancestor spans the width", mz && Math.abs(mz.w - (inner - 0.5)) < 1 && / anc/.test(mz.cls),
    mz && `${mz.w} ${mz.cls}`);
  check("reset button shown", await page.locator("#reset:not(.hide)").count() === 1);
  await page.mouse.move(xz.x + xz.w / 2, xz.y + xz.h / 2);
  const ztip = await page.locator("#tip text tspan").allTextContents();
  check("zoomed tooltip gives the share of the zoomed frame",
    ztip.includes("75.00% of the zoomed frame"), ztip.join(" | "));

  // Search with Ctrl-F: the prompt takes a regex; matches turn magenta and the
  // matched percent counts each byte once.
  await page.locator("#reset").click();
  const resetW = await box("build_table");
  check("reset restores the widths", resetW && Math.abs(resetW.w - bt.w) < 0.01, resetW && resetW.w);
  page.once("dialog", (d) => d.accept("^m?alloc$"));
  await page.keyboard.press("Control+f");
  await page.waitForFunction(() => document.getElementById("matched").textContent !== "");
  const matched = await page.locator("#matched").textContent();
  check("matched percent for ^m?alloc$ is 90.00%", matched.startsWith("Matched: 90.00%"), matched);
  // 9,000 bytes = 8.79 KiB, in the graph's unit.
  check("matched value in the unit", matched === "Matched: 90.00% (8.79 KiB) in 3 frames", matched);
  const nmatch = await page.locator("#frames g.match").count();
  check("three malloc frames highlighted", nmatch === 3, nmatch);
  const fill = await page.locator("#frames g.match rect.b").first()
    .evaluate((r) => getComputedStyle(r).fill);
  check("highlight colour is magenta", fill === "rgb(230, 0, 230)", fill);

  // Search while zoomed: percent of all and of the zoom (xstrdup's malloc: 3000 of 4000).
  const parse2 = await box("parse");
  await page.mouse.click(parse2.x + parse2.w / 2, parse2.y + parse2.h / 2);
  const zmatched = await page.locator("#matched").textContent();
  check("zoomed search gives 75.00% of zoom (3,000 bytes = 2.93 KiB)",
    zmatched === "Matched: 90.00% of all (8.79 KiB), 75.00% of zoom (2.93 KiB) in 3 frames",
    zmatched);
  await page.locator("#reset").click();

  // Screenshot with the highlight and a tooltip, then reset with Escape.
  const b2 = await box("xstrdup");
  await page.mouse.move(b2.x + b2.w / 2, b2.y + b2.h / 2);
  await page.screenshot({ path: join(browserDir, "flamegraph.png") });
  check("screenshot saved", existsSync(join(browserDir, "flamegraph.png")));
  await page.keyboard.press("Escape");
  check("Escape clears the search",
    (await page.locator("#frames g.match").count()) === 0 &&
    (await page.locator("#matched").textContent()) === "");

  // The Search button asks too; a bad regex is reported, not thrown.
  page.once("dialog", (d) => d.accept("("));
  await page.locator("#search").click();
  await page.waitForFunction(() => document.getElementById("matched").textContent !== "");
  const badre = await page.locator("#matched").textContent();
  check("invalid regex reported", badre === "Invalid regex: (", badre);
  page.once("dialog", (d) => d.accept("pars|grow"));
  await page.locator("#search").click();
  await page.waitForFunction(() => /^Matched/.test(document.getElementById("matched").textContent));
  const m2 = await page.locator("#matched").textContent();
  // parse (4,000) contains grow (1,000): counted once, 40.00%.
  check("nested matches counted once (pars|grow: 40.00%, 4,000 bytes = 3.91 KiB)",
    m2 === "Matched: 40.00% (3.91 KiB) in 2 frames", m2);
  await page.locator("#search").click();   // now "Reset Search"
  check("Reset Search clears", (await page.locator("#frames g.match").count()) === 0);

  check("no network requests", remote.length === 0, remote.join(" "));
  check("no script errors during the session", errors.length === 0, errors.join("; "));

  await cpu(page, errors, remote);
  await demo(page, errors, remote);
}

// A CPU profile as mt-fold folds `--metric period` of a cpu-clock capture: every
// sample's period is 1,001,001 ns (999 Hz).  hash 400 samples, sort 200, read 50:
// 650,650,650 ns in all.  No --unit: the unit (ns) comes from the stats' metric
// and event, and the hover shows time and the error bar in time.
async function cpu(page, errors, remote) {
  const P = 1001001;
  const rows = [["main;compute;hash", 400], ["main;compute;sort", 200], ["main;read", 50]];
  writeFileSync(join(work, "cpu.folded"), rows.map(([s, n]) => `${s} ${n * P}`).join("\n") + "\n");
  writeFileSync(join(work, "cpu.json"), JSON.stringify({
    format: "mt-fold-report", version: 1, metric: "period", unit: "events", confidence: 0.95,
    mode: "event", event: "cpu-clock", total: { value: 650 * P, n: 650, exact: false },
    stacks: rows.map(([s, n]) => ({ stack: s, value: n * P, n, exact: false })),
  }));
  const svgPath = join(work, "cpu.svg");
  execFileSync(join(src, "scripts/mt-flamegraph"), [
    "--colors", "cpu", "--stats", join(work, "cpu.json"), "--minwidth", "0", "--width", "1000",
    "-o", svgPath, join(work, "cpu.folded"),
  ], { stdio: ["ignore", "inherit", "inherit"] });
  errors.length = 0;
  await page.goto(pathToFileURL(svgPath).href);
  await page.waitForSelector("svg[data-ready='1']", { timeout: 10000 });
  const title = await page.locator("#title").textContent();
  check("cpu: title names the metric, event and unit", title === "cpu-clock period (ns)", title);
  const r = await page.evaluate(() => {
    const g = [...document.querySelectorAll("#frames g.f")].find((x) => x.mt.name === "hash");
    const b = g.querySelector("rect.b").getBoundingClientRect();
    return { x: b.x, y: b.y, w: b.width, h: b.height };
  });
  await page.mouse.move(r.x + r.w / 2, r.y + r.h / 2);
  await page.waitForSelector("#tip:not(.hide)", { timeout: 3000 });
  const tip = await page.locator("#tip text tspan").allTextContents();
  console.log("cpu tooltip: " + tip.join(" | "));
  check("cpu: hover shows the time and its exact ns",
    tip[0] === "hash" && tip[1] === "400 ms (400,400,400 ns), 61.54% of all", tip.join(" | "));
  // 400 samples: 1/sqrt(400) = 5.0%, 20.0 ms; Garwood 95% of 400 is 361.9-441.4 samples.
  check("cpu: hover shows the error bar in ms",
    tip.some((l) => /^400 samples, ±20\.0 ms \(±5\.0%, 1σ\), 95%: 36[23] ms–44[12] ms$/.test(l)),
    tip.join(" | "));
  const details = await page.locator("#details").textContent();
  check("cpu: details line in ms", details === "hash: 400 ms (400,400,400 ns), 61.54% of all",
    details);
  page.once("dialog", (d) => d.accept("^hash$"));
  await page.keyboard.press("Control+f");
  await page.waitForFunction(() => document.getElementById("matched").textContent !== "");
  const matched = await page.locator("#matched").textContent();
  check("cpu: matched value in ms", matched === "Matched: 61.54% (400 ms) in 1 frame", matched);
  await page.keyboard.press("Escape");
  check("cpu: no network requests, no script errors", !remote.length && !errors.length,
    remote.concat(errors).join("; "));
}

// The SVG `make demo` leaves (or MT_DEMO_SVG), when there is one: the same gestures on
// a real profile, with expectations taken from the SVG's own data attributes.
async function demo(page, errors, remote) {
  const svgPath = process.env.MT_DEMO_SVG || join(src, "build/demo/demo.svg");
  if (!existsSync(svgPath)) {
    console.log(`SKIP demo: no ${svgPath} (run make demo first)`);
    return;
  }
  errors.length = 0;
  remote.length = 0;
  await page.goto(pathToFileURL(svgPath).href);
  await page.waitForSelector("svg[data-ready='1']", { timeout: 20000 });
  const size = await page.evaluate(() => [+document.documentElement.getAttribute("width"),
    +document.documentElement.getAttribute("height")]);
  await page.setViewportSize({ width: size[0], height: Math.min(size[1], 4000) });
  // The widest frame below the root, and everything needed to check it.
  const info = () => page.evaluate(() => {
    const C = JSON.parse(document.documentElement.getAttribute("data-mt"));
    const fs = [...document.querySelectorAll("#frames g.f")].map((g, i) => {
      const r = g.querySelector("rect.b").getBoundingClientRect();
      return { i, name: g.mt.name, v: g.mt.v, d: g.mt.d, hidden: g.classList.contains("hide"),
        x: r.x, y: r.y, w: r.width, h: r.height };
    });
    return { C, fs };
  });
  const before = await info();
  const kids = before.fs.filter((f) => f.d === 1).sort((a, b) => b.v - a.v);
  check("demo: frames drawn", kids.length > 0 && before.fs.length > 2, before.fs.length);
  if (!kids.length) return;
  // Zoom into a frame with children if there is one: the widest at depth 2 or 1.
  const deeper = before.fs.filter((f) => f.d === 2).sort((a, b) => b.v - a.v);
  const z = deeper.length ? deeper[0] : kids[0];
  const share = (100 * z.v / before.C.total).toFixed(2) + "%";
  await page.mouse.move(z.x + z.w / 2, z.y + z.h / 2);
  await page.waitForSelector("#tip:not(.hide)", { timeout: 3000 });
  const tip = (await page.locator("#tip text tspan").allTextContents()).join("\n");
  console.log("demo tooltip: " + tip.split("\n").join(" | "));
  check("demo: tooltip names the hovered frame", tip.replace(/\n  /g, "").startsWith(z.name), tip);
  check("demo: tooltip gives its share " + share, tip.includes(share + " of all"), tip);
  await page.mouse.click(z.x + z.w / 2, z.y + z.h / 2);
  const zoomed = await info();
  const zz = zoomed.fs[z.i];
  check("demo: zoomed frame fills the width", Math.abs(zz.w - (before.C.inner - 0.5)) < 1, zz.w);
  const changed = zoomed.fs.filter((f, i) => !f.hidden && Math.abs(f.w - before.fs[i].w) > 0.5);
  check("demo: widths changed under the zoom", changed.length >= 1 && (z.v === before.C.total ||
    zoomed.fs.some((f) => f.hidden)), changed.length);
  const esc = z.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  page.once("dialog", (d) => d.accept("^" + esc + "$"));
  await page.keyboard.press("Control+f");
  await page.waitForFunction(() => document.getElementById("matched").textContent !== "");
  const matched = await page.locator("#matched").textContent();
  const pctm = parseFloat(matched.replace(/^Matched: /, ""));
  check("demo: search highlights the frame",
    (await page.locator("#frames g.match").count()) >= 1 && pctm >= parseFloat(share) - 0.01,
    matched);
  await page.screenshot({ path: join(browserDir, "demo.png") });
  await page.locator("#reset").click();
  await page.keyboard.press("Escape");
  const after = await info();
  check("demo: reset restores the layout",
    after.fs.every((f, i) => Math.abs(f.w - before.fs[i].w) < 0.01 && f.hidden === before.fs[i].hidden) &&
    (await page.locator("#frames g.match").count()) === 0);
  check("demo: no network requests, no script errors", !remote.length && !errors.length,
    remote.concat(errors).join("; "));
}

main().catch((e) => { check("browser session", false, e && e.stack || e); })
  .finally(async () => {
    if (browser) await browser.close().catch(() => {});
    rmSync(work, { recursive: true, force: true });
    finish();
  });
