// bench/html.sh's browser half: loads each page given ROUNDS times in Debian's
// chromium (headless, playwright-core from build/browser) and prints, per page,
// the medians of the time to first render (the page's performance mark
// "mt-first-render", set once every view is drawn, in ms since navigation
// start) and of domContentLoadedEventEnd, and the JS heap used after load.
// Usage: node bench/html-render.mjs ROUNDS PAGE...
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";

const src = resolve(process.env.MT_SRC || ".");
const browserDir = resolve(process.env.MT_BROWSER_DIR || join(src, "build/browser"));
const { chromium } = createRequire(join(browserDir, "package.json"))("playwright-core");
const [rounds, ...pages] = process.argv.slice(2);
const work = mkdtempSync(join(tmpdir(), "mt-bench-html-"));
const browser = await chromium.launchPersistentContext(join(work, "profile"), {
  executablePath: process.env.MT_CHROMIUM || "/usr/bin/chromium", headless: true,
  viewport: { width: 1280, height: 900 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--enable-precise-memory-info"],
});
const page = browser.pages()[0] || await browser.newPage();
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
const med = (v) => { const s = [...v].sort((a, b) => a - b), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
for (const p of pages) {
  const first = [], dcl = [];
  let heap = 0, frames = 0;
  for (let i = 0; i < +rounds; i++) {
    await page.goto(pathToFileURL(resolve(p)).href);
    await page.waitForSelector("body[data-ready='1']", { timeout: 60000 });
    const m = await page.evaluate(() => ({
      first: performance.getEntriesByName("mt-first-render")[0].startTime,
      dcl: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
      heap: performance.memory ? performance.memory.usedJSHeapSize : 0,
      frames: [...document.querySelectorAll(".flame")].reduce((s, f) => s + (+f.dataset.frames || 0), 0),
    }));
    first.push(m.first); dcl.push(m.dcl); heap = m.heap; frames = m.frames;
  }
  console.log(`${p}\t${statSync(p).size}\t${med(first).toFixed(1)}\t${med(dcl).toFixed(1)}\t${(heap / 1048576).toFixed(1)}\t${frames}`);
}
await browser.close();
rmSync(work, { recursive: true, force: true });
if (errors.length) { console.error("page errors: " + errors.join("; ")); process.exit(1); }
