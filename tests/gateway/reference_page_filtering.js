// Drives a large reference page (GitHub's) in headless Chromium at a desktop and a phone size, for
// tests/gateway/test_reference.py; prints one JSON object of observations, and the Python test asserts on them.
//   node reference_page_filtering.js URL ARTIFACT_DIR QUERY
// Environment: PLAYWRIGHT_CORE (path of the playwright-core package), CHROMIUM (the browser executable).
"use strict";

const { chromium } = require(process.env.PLAYWRIGHT_CORE);

const [url, artifacts, query] = process.argv.slice(2);
const NOTHING = "zzqx nothing";
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const SIZES = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true },
};

// What the reader sees once the next frame is drawn: the first entry shown, the filter box, what is displayed and
// what the counts say.
async function look() {
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const displayed = (selector) => Array.from(document.querySelectorAll(selector)).filter((e) => e.offsetParent !== null);
  const box = (element) => {
    const rect = element.getBoundingClientRect();
    return { top: rect.top, bottom: rect.bottom, height: rect.height };
  };
  const filter = document.getElementById("filter");
  const filterBox = box(filter);
  // How much of the window's top a sticky bar holding the filter covers (nothing, when it is not sticky).
  let sticky = filter;
  while (sticky && getComputedStyle(sticky).position !== "sticky") { sticky = sticky.parentElement; }
  const covered = sticky ? Math.max(0, sticky.getBoundingClientRect().bottom) : 0;
  const rect = filter.getBoundingClientRect();
  // Nothing covers the filter box: the element at its middle is the input itself.
  const atMiddle = document.elementFromPoint((rect.left + rect.right) / 2, (rect.top + rect.bottom) / 2);
  const shown = displayed(".item");
  const first = shown[0] || null;
  const atTop = shown.find((e) => e.getBoundingClientRect().bottom > covered) || null;
  const text = (selector) => { const e = document.querySelector(selector); return e && e.offsetParent !== null ? e.textContent : null; };
  // The blocks shown above the first entry (headings, paragraphs, preformatted text), outside entries: asking where
  // something inside an entry is would lay out every entry the browser skips (content-visibility: auto).
  const blocks = Array.from(document.querySelectorAll("main h2, main h3, main p, main pre")).filter((e) => !e.closest(".item"));
  const above = !first ? [] : blocks
    .filter((e) => e.offsetParent !== null && e.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING)
    .map((e) => e.tagName.toLowerCase() + (e.classList.length ? "." + e.classList[0] : ""));
  const status = document.getElementById("filter-status");
  return {
    viewportHeight: innerHeight,
    scrollY: Math.round(scrollY),
    filter: { ...filterBox, onTop: atMiddle === filter },
    firstMatch: first && { id: first.id, ...box(first) },
    atTop: atTop && { id: atTop.id, ...box(atTop) },
    instructionsShown: displayed("#instructions").length === 1,
    ledeShown: displayed("p.lede").length === 1,
    above,
    status: text("#filter-status"),
    statusBox: status && status.offsetParent !== null ? box(status) : null,
    count: document.getElementById("filter-count").textContent,
    functionsShown: displayed(".item.fn").length,
    termsShown: displayed(".item.term").length,
    toolsShown: displayed(".item.tool").length,
    modulesShown: displayed("section.module").length,
    sectionsShown: displayed("main > section").map((e) => e.id),
    modulesHeading: text("#modules > h2 .n"),
    termsHeading: text("#terms > h2 .n"),
    tocModules: text('[data-toc="modules"] > .n'),
    tocTerms: text('[data-toc="terms"] > .n'),
  };
}

async function drive(browser, name, seen) {
  const page = await browser.newPage(SIZES[name]);
  const problems = [];
  page.on("console", (message) => { if (message.type() === "error" || message.type() === "warning") problems.push(message.text()); });
  page.on("pageerror", (error) => problems.push(String(error)));
  const response = await page.goto(url, { waitUntil: "load" });
  const out = { status: response.status(), csp: (await response.allHeaders())["content-security-policy"] || null };
  out.loaded = await page.evaluate(look);
  await page.screenshot({ path: `${artifacts}/reference-github-${name}.png` });

  // Scrolled half-way down, the filter box is still on screen.
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
  out.scrolled = await page.evaluate(look);
  await page.screenshot({ path: `${artifacts}/reference-github-${name}-scrolled.png` });
  await page.evaluate(() => window.scrollTo(0, 0));

  // "/" focuses the filter; typing filters; the matches come first.
  await page.keyboard.press("/");
  out.slashFocuses = await page.evaluate(() => document.activeElement.id);
  await page.keyboard.type(query);
  out.filtered = await page.evaluate(look);
  await page.screenshot({ path: `${artifacts}/reference-github-${name}-filtered.png` });
  await page.evaluate(() => window.scrollBy(0, 3 * innerHeight));
  out.filteredScrolled = await page.evaluate(look);

  // Escape clears the filter; the entry the reader scrolled to stays where it is, and the instructions come back.
  await page.keyboard.press("Escape");
  out.clearedInPlace = await page.evaluate(look);

  // A type in a match links to its term; a link to an entry the filter hides clears the filter and shows it.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.fill("#filter", query);
  await page.evaluate(look);
  const link = await page.$(`#${out.filtered.firstMatch.id.replace(/\./g, "\\.")} a[href^="#term-"]`);
  out.termLink = await link.getAttribute("href");
  await link.click();
  await page.waitForFunction((href) => location.hash === href && document.getElementById("filter").value === "", out.termLink);
  out.afterTermLink = await page.evaluate(async () => {
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const shown = document.querySelector(":target");
    const rect = shown.getBoundingClientRect();
    return { hash: location.hash, target: shown.offsetParent !== null ? shown.id : null, top: rect.top, viewportHeight: innerHeight };
  });
  await page.fill("#filter", query);
  await page.evaluate(() => { location.hash = "#module-emojis"; });
  await page.waitForFunction(() => document.getElementById("filter").value === "");
  out.afterHiddenLink = await page.evaluate(async () => {
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const rect = document.getElementById("module-emojis").getBoundingClientRect();
    return { top: rect.top, viewportHeight: innerHeight };
  });

  // Cleared without scrolling through the matches, the page is back where it was before filtering.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.fill("#filter", query);
  await page.evaluate(look);
  await page.focus("#filter");
  await page.keyboard.press("Escape");
  out.cleared = await page.evaluate(look);

  // A filter nothing matches says so.
  await page.fill("#filter", NOTHING);
  out.nothing = await page.evaluate(look);
  await page.screenshot({ path: `${artifacts}/reference-github-${name}-nothing.png` });
  out.problems = problems;
  await page.close();

  // Without JavaScript everything is there, and the filter (which needs it) is not.
  const plain = await browser.newPage({ ...SIZES[name], javaScriptEnabled: false });
  await plain.goto(url, { waitUntil: "load" });
  out.noScript = await plain.evaluate(() => {
    const displayed = (selector) => Array.from(document.querySelectorAll(selector)).filter((e) => e.offsetParent !== null).length;
    return { filterShown: displayed("#filter") === 1, statusShown: displayed("#filter-status") === 1,
      instructionsShown: displayed("#instructions") === 1, functionsShown: displayed(".item.fn"), termsShown: displayed(".item.term") };
  });
  await plain.close();
  seen[name] = out;
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ARGS, timeout: 30000 });
  const seen = { query, nothing: NOTHING };
  try {
    for (const name of Object.keys(SIZES)) { await drive(browser, name, seen); }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack || error) + "\n");
  process.exit(1);
});
