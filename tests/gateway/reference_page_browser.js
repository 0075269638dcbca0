// Drives the reference page in headless Chromium for tests/gateway/test_reference.py; prints one JSON object of
// observations, and the Python test asserts on them. Usage:
//   node reference_page_browser.js URL ARTIFACT_DIR
// Environment: PLAYWRIGHT_CORE (path of the playwright-core package), CHROMIUM (the browser executable).
"use strict";

const { chromium } = require(process.env.PLAYWRIGHT_CORE);

const [url, artifacts] = process.argv.slice(2);
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

function visible(page, selector) {
  return page.$$eval(selector, (elements) => elements.filter((e) => e.offsetParent !== null).map((e) => e.id));
}

async function main() {
  // playwright-core gives each launch a fresh --user-data-dir of its own.
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ARGS, timeout: 30000 });
  const seen = {};
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const problems = [];
    page.on("console", (message) => { if (message.type() === "error" || message.type() === "warning") problems.push(message.text()); });
    page.on("pageerror", (error) => problems.push(String(error)));
    const response = await page.goto(url, { waitUntil: "load" });
    seen.status = response.status();
    seen.contentEncoding = (await response.allHeaders())["content-encoding"] || null;
    seen.title = await page.title();
    seen.filterShown = await page.isVisible("#filter");
    seen.functionsShown = (await visible(page, ".item.fn")).length;
    seen.termsShown = (await visible(page, ".item.term")).length;
    seen.toolsShown = (await visible(page, ".item.tool")).length;
    seen.count = await page.textContent("#filter-count");
    await page.screenshot({ path: `${artifacts}/reference-page.png` });

    // Every in-page link has a target.
    seen.links = await page.$$eval('a[href^="#"]', (links) => links.length);
    seen.brokenLinks = await page.$$eval('a[href^="#"]', (links) =>
      links.map((a) => a.getAttribute("href")).filter((href) => !document.getElementById(decodeURIComponent(href.slice(1)))));

    // Filtering narrows the list, as the user types.
    await page.fill("#filter", "cancel order");
    seen.filtered = await visible(page, ".item.fn");
    seen.filteredTerms = await visible(page, ".item.term");
    seen.filteredModules = await visible(page, "section.module");
    seen.filteredCount = await page.textContent("#filter-count");
    await page.screenshot({ path: `${artifacts}/reference-page-filtered.png` });

    // A link to an entry the filter hides clears the filter and shows it.
    await page.evaluate(() => { location.hash = "#term-Customer"; });
    await page.waitForFunction(() => document.getElementById("filter").value === "");
    seen.afterRevealShown = (await visible(page, ".item.fn")).length;

    // "/" focuses the filter; Escape clears it.
    await page.click("h1");
    await page.keyboard.press("/");
    seen.slashFocuses = await page.evaluate(() => document.activeElement.id);
    await page.keyboard.type("stock");
    seen.typed = (await visible(page, ".item.fn")).length;
    await page.keyboard.press("Escape");
    seen.escapeRestores = (await visible(page, ".item.fn")).length;

    // A type in a signature links to its term.
    await page.click('#fn-orders\\.create_order a[href="#term-OrderItemCreate"]');
    seen.hashAfterClick = await page.evaluate(() => location.hash);
    seen.targetMatches = await page.evaluate(() => document.querySelector(":target").id);
    await page.screenshot({ path: `${artifacts}/reference-page-term.png` });
    seen.problems = problems;

    // Without JavaScript everything is there, and the filter (which needs it) is not.
    const plain = await browser.newPage({ javaScriptEnabled: false, viewport: { width: 1280, height: 860 } });
    await plain.goto(url, { waitUntil: "load" });
    seen.noScriptFilterShown = await plain.isVisible("#filter");
    seen.noScriptFunctionsShown = (await visible(plain, ".item.fn")).length;
    seen.noScriptTermsShown = (await visible(plain, ".item.term")).length;
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack || error) + "\n");
  process.exit(1);
});
