// Drives the MCP Apps test host (host.mjs) in headless Chromium for tests/gateway/test_apps_browser.py; prints one
// JSON object of observations, and the Python test asserts on them. Usage:
//   node drive.js BASE_URL ARTIFACT_DIR SCENARIO...
// BASE_URL serves /host (the host page), /mcp (the demo's gateway, approval for writes), /fixture/mcp (a gateway
// over an API whose data is hostile, 500 rows at once) and /outside.png (counts the loads that got out).
// Environment: PLAYWRIGHT_CORE (path of the playwright-core package), CHROMIUM (the browser executable), TOKEN
// (the demo's bearer token).
"use strict";

const { chromium } = require(process.env.PLAYWRIGHT_CORE);

const [base, artifacts, ...scenarios] = process.argv.slice(2);
const TOKEN = process.env.TOKEN;
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

async function view(page) {
  // The view's frame, once its script runs.
  const handle = await page.waitForSelector("#view");
  const frame = await handle.contentFrame();
  await frame.waitForFunction(() => document.getElementById("root") !== null);
  return frame;
}

async function show(page, call) {
  return page.evaluate((call) => window.showCall(call), call);
}

function rowIds(frame) {
  return frame.$$eval("tbody tr", (rows) => rows.map((row) => row.children[0].textContent));
}

const SCENARIOS = {
  async table(page, seen) {
    const call = { mcp: "/mcp", token: TOKEN, tool: "call_function", args: { name: "orders.list_orders", args: { limit: 5 } } };
    const shown = await show(page, call);
    seen.uri = shown.uri;
    seen.mimeType = shown.mimeType;
    seen.resourceMeta = shown.meta;
    const frame = await view(page);
    await frame.waitForSelector("tbody tr");
    seen.headers = await frame.$$eval("thead th", (cells) => cells.map((cell) => cell.textContent));
    seen.firstPage = await rowIds(frame);
    await page.screenshot({ path: `${artifacts}/apps-table.png`, fullPage: true });
    // Sort: by total, then the other way round.
    const total = await frame.$("th[title=total_cents]");
    await total.click();
    seen.ascending = await frame.$$eval("tbody tr", (rows) => rows.map((row) => Number(row.children[5].textContent)));
    await total.click();
    seen.descending = await frame.$$eval("tbody tr", (rows) => rows.map((row) => Number(row.children[5].textContent)));
    seen.sortMark = await frame.$eval("th[title=total_cents]", (cell) => cell.getAttribute("aria-sort"));
    await page.screenshot({ path: `${artifacts}/apps-table-sorted.png`, fullPage: true });
    // Page: next calls the same function through the host with the cursor; previous comes back.
    seen.previousDisabledFirst = await frame.$eval("nav.pager button", (button) => button.disabled);
    await frame.click("nav.pager button:last-child");
    await frame.waitForFunction((ids) => [...document.querySelectorAll("tbody tr")].every(
      (row) => !ids.includes(row.children[0].textContent)), seen.firstPage);
    seen.secondPage = await rowIds(frame);
    seen.previousDisabledSecond = await frame.$eval("nav.pager button", (button) => button.disabled);
    await page.screenshot({ path: `${artifacts}/apps-table-page-2.png`, fullPage: true });
    await frame.click("nav.pager button:first-child");
    await frame.waitForFunction((first) => document.querySelector("tbody tr td").textContent === first, seen.firstPage[0]);
    seen.backToFirst = await rowIds(frame);
    seen.sizes = await page.evaluate(() => window.hostLog.sizes.length);
  },

  async detail(page, seen) {
    const shown = await show(page, { mcp: "/mcp", token: TOKEN, tool: "orders-get_order", args: { order_id: 1 } });
    seen.uri = shown.uri;
    const frame = await view(page);
    await frame.waitForSelector("dl.detail");
    seen.title = await frame.$eval("header h1", (node) => node.textContent);
    seen.fields = await frame.$$eval("main > dl.detail > dt", (nodes) => nodes.map((node) => node.textContent));
    seen.nested = await frame.$$eval("main > dl.detail dl.detail > dt", (nodes) => nodes.map((node) => node.textContent));
    seen.lines = await frame.$$eval("table.lines thead th", (cells) => cells.map((cell) => cell.textContent));
    seen.lineRows = await frame.$$eval("table.lines tbody tr", (rows) => rows.length);
    await page.screenshot({ path: `${artifacts}/apps-detail.png`, fullPage: true });
  },

  async handshake(page, seen) {
    // The official client in its default mode: the initialize handshake, then the session id the gateway gave.
    const call = { mcp: "/mcp", token: TOKEN, tool: "call_function", args: { name: "orders.get_order", args: { order_id: 1 } }, handshake: true };
    const shown = await show(page, call);
    seen.uri = shown.uri;
    seen.version = shown.version;
    const frame = await view(page);
    await frame.waitForSelector("dl.detail");
    seen.fields = await frame.$$eval("main > dl.detail > dt", (nodes) => nodes.map((node) => node.textContent));
  },

  async hostile(page, seen) {
    const call = { mcp: "/fixture/mcp", tool: "call_function", args: { name: "notes.list_notes", args: { limit: 12 } } };
    await show(page, call);
    const frame = await view(page);
    await frame.waitForSelector("tbody tr");
    // Unfold one long value: it stays text.
    await frame.click("button.fold");
    seen.page = await frame.evaluate(() => ({
      pwned: window.__pwned === undefined ? null : window.__pwned,
      images: document.querySelectorAll("img").length,
      links: document.querySelectorAll("a").length,
      scripts: document.querySelectorAll("script").length,
      iframes: document.querySelectorAll("iframe").length,
      text: document.body.innerText,
      title: document.querySelector("header h1").textContent,
    }));
    seen.hostPwned = await page.evaluate(() => (window.__pwned === undefined ? null : window.__pwned));
    await page.screenshot({ path: `${artifacts}/apps-hostile.png`, fullPage: true });
  },

  async csp(page, seen) {
    await show(page, { mcp: "/fixture/mcp", tool: "call_function", args: { name: "notes.list_notes", args: { limit: 3 } } });
    const frame = await view(page);
    await frame.waitForSelector("tbody tr");
    const outside = `${base}/outside.png`;
    seen.attempts = await frame.evaluate(async (outside) => {
      const violations = [];
      document.addEventListener("securitypolicyviolation", (event) => violations.push(event.effectiveDirective));
      const tried = {};
      try {
        await fetch(outside + "?fetch");
        tried.fetch = "loaded";
      } catch (error) {
        tried.fetch = "blocked";
      }
      const image = new Image();
      tried.image = await new Promise((resolve) => {
        image.onload = () => resolve("loaded");
        image.onerror = () => resolve("blocked");
        image.src = outside + "?image";
      });
      const script = document.createElement("script");
      tried.script = await new Promise((resolve) => {
        script.onload = () => resolve("loaded");
        script.onerror = () => resolve("blocked");
        script.src = outside + "?script";
        document.head.appendChild(script);
      });
      const style = document.createElement("link");
      style.rel = "stylesheet";
      tried.style = await new Promise((resolve) => {
        style.onload = () => resolve("loaded");
        style.onerror = () => resolve("blocked");
        style.href = outside + "?style";
        document.head.appendChild(style);
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { tried, violations };
    }, outside);
  },

  async policy(page, seen) {
    // What the frame may call is what the caller may call: its tools/call goes through the host's session.
    await show(page, { mcp: "/mcp", token: TOKEN, tool: "call_function", args: { name: "orders.get_order", args: { order_id: 1 } } });
    const frame = await view(page);
    await frame.waitForSelector("dl.detail");
    seen.answers = await frame.evaluate(async () => {
      function ask(id, name, args) {
        return new Promise((resolve) => {
          window.addEventListener("message", function listen(event) {
            if (event.source === window.parent && event.data && event.data.id === id) {
              window.removeEventListener("message", listen);
              resolve(event.data);
            }
          });
          window.parent.postMessage({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }, "*");
        });
      }
      return {
        hidden: await ask(9001, "call_function", { name: "users.list_users", args: {} }),
        allowed: await ask(9002, "call_function", { name: "orders.get_order", args: { order_id: 2 } }),
      };
    });
  },

  async rows500(page, seen) {
    await show(page, { mcp: "/fixture/mcp", tool: "call_function", args: { name: "notes.list_notes", args: { limit: 1 } } });
    const frame = await view(page);
    await frame.waitForSelector("tbody tr");
    // The next result holds 500 rows: from the host's sending it (through its AppBridge) to the rows on screen.
    const result = await page.evaluate(() =>
      window.callTool({ mcp: "/fixture/mcp", tool: "call_function", args: { name: "notes.list_notes", args: { limit: 500 } } }));
    seen.resultRows = Array.isArray(result.structuredContent) ? result.structuredContent.length : null;
    const sentAt = await page.evaluate((result) => {
      const at = Date.now();
      window.hostBridge.sendToolResult(result);
      return at;
    }, result);
    await frame.waitForFunction(() => document.querySelectorAll("tbody tr").length === 500, null, { polling: "raf", timeout: 10000 });
    const shownAt = await frame.evaluate(() => Date.now());
    seen.renderMs = shownAt - sentAt;
    const sortStart = await frame.evaluate(() => Date.now());
    await frame.click("th[title=title]");
    await frame.waitForFunction(() => document.querySelector("th[title=title]").getAttribute("aria-sort") === "ascending");
    seen.sortMs = (await frame.evaluate(() => Date.now())) - sortStart;
    seen.rows = await frame.$$eval("tbody tr", (rows) => rows.length);
    await page.screenshot({ path: `${artifacts}/apps-500-rows.png` });
  },

  async form(page, seen) {
    const call = { mcp: "/mcp", token: TOKEN, tool: "call_function", args: { name: "orders.update_order", args: { order_id: 2, note: "proposed by the agent" } } };
    const shown = await show(page, call);
    seen.status = shown.result.structuredContent && shown.result.structuredContent.status;
    const frame = await view(page);
    await frame.waitForSelector("form.approval");
    seen.labels = await frame.$$eval("label.field .name", (nodes) => nodes.map((node) => node.textContent));
    seen.choices = await frame.$$eval("select[name=status] option", (nodes) => nodes.map((node) => node.value));
    seen.prefilled = await frame.$eval("input[name=note]", (node) => node.value);
    await page.screenshot({ path: `${artifacts}/apps-form.png`, fullPage: true });
    await frame.fill("input[name=note]", "approved by a person");
    await frame.click("button.primary");
    await frame.waitForSelector("dl.detail");
    seen.after = await frame.evaluate(() => document.body.innerText);
    await page.screenshot({ path: `${artifacts}/apps-form-confirmed.png`, fullPage: true });
    await page.waitForFunction(() => window.hostLog.modelContext.length > 0);
    seen.modelContext = await page.evaluate(() => window.hostLog.modelContext);
    const order = await page.evaluate((token) => window.callTool({ mcp: "/mcp", token, tool: "call_function", args: { name: "orders.get_order", args: { order_id: 2 } } }), TOKEN);
    seen.order = order.structuredContent;
  },

  async cancel(page, seen) {
    const before = await page.evaluate((token) => window.callTool({ mcp: "/mcp", token, tool: "call_function", args: { name: "orders.get_order", args: { order_id: 3 } } }), TOKEN);
    seen.before = before.structuredContent && before.structuredContent.note;
    const call = { mcp: "/mcp", token: TOKEN, tool: "call_function", args: { name: "orders.update_order", args: { order_id: 3, note: "must not be written" } } };
    await show(page, call);
    const frame = await view(page);
    await frame.waitForSelector("form.approval");
    await frame.click("form.approval .actions button:not(.primary)");
    await frame.waitForSelector("p.note");
    seen.shown = await frame.$eval("p.note", (node) => node.textContent);
    await page.screenshot({ path: `${artifacts}/apps-form-cancelled.png`, fullPage: true });
    await page.waitForFunction(() => window.hostLog.modelContext.length > 0);
    seen.modelContext = await page.evaluate(() => window.hostLog.modelContext);
    const after = await page.evaluate((token) => window.callTool({ mcp: "/mcp", token, tool: "call_function", args: { name: "orders.get_order", args: { order_id: 3 } } }), TOKEN);
    seen.after = after.structuredContent && after.structuredContent.note;
  },
};

SCENARIOS.folded = async (page, seen) => {
  // An optional header the agent left out folds under a closed "More arguments"; one it proposed stays in view.
  const order = { customer_id: 1, items: [{ product_id: 1, quantity: 1 }] };
  const form = async (args) => {
    await show(page, { mcp: "/mcp", token: TOKEN, tool: "call_function", args: { name: "orders.create_order", args } });
    const frame = await view(page);
    await frame.waitForSelector("form.approval");
    return [frame, await frame.evaluate(() => {
      const more = document.querySelector("form.approval details.more");
      const inMore = (name) => Boolean(document.querySelector(`[name="${name}"]`).closest("details"));
      return {
        more: more && { open: more.open, summary: more.querySelector("summary").textContent },
        folded: ["Idempotency-Key", "customer_id", "items", "shipping_address", "note"].filter(inMore),
        visible: document.querySelector('[name="Idempotency-Key"]').checkVisibility(),
        end: document.querySelector("form.approval").lastElementChild.previousElementSibling.previousElementSibling.tagName,
      };
    })];
  };
  const [frame, left] = await form(order);
  seen.left = left;
  await page.screenshot({ path: `${artifacts}/apps-form-folded.png`, fullPage: true });
  const sized = await page.evaluate(() => window.hostLog.sizes.length);
  await frame.click("form.approval details.more summary");
  await page.waitForFunction((sized) => window.hostLog.sizes.length > sized, sized); // the frame grew
  seen.opened = await frame.$eval('[name="Idempotency-Key"]', (node) => node.checkVisibility());
  await page.screenshot({ path: `${artifacts}/apps-form-unfolded.png`, fullPage: true });
  await frame.click("form.approval .actions button:not(.primary)");
  await frame.waitForSelector("p.note");
  await page.goto(`${base}/host`, { waitUntil: "load" });
  seen.proposed = (await form({ ...order, "Idempotency-Key": "once" }))[1];
};

SCENARIOS.destructive = async (page, seen) => {
  // A destructive call's Confirm is a danger button, unlike a write's; then the person cancels.
  const colour = async (call) => {
    await show(page, { mcp: "/mcp", token: TOKEN, tool: "call_function", args: call });
    const frame = await view(page);
    await frame.waitForSelector("form.approval");
    return [frame, await frame.$eval("form.approval button.primary", (node) => ({
      className: node.className, label: node.textContent, background: getComputedStyle(node).backgroundColor,
    }))];
  };
  seen.write = (await colour({ name: "orders.update_order", args: { order_id: 4, note: "not written" } }))[1];
  await page.goto(`${base}/host`, { waitUntil: "load" });
  const [frame, confirm] = await colour({ name: "customers.delete_customer", args: { customer_id: 1 } });
  seen.destructive = confirm;
  await page.screenshot({ path: `${artifacts}/apps-form-destructive.png`, fullPage: true });
  await frame.click("form.approval .actions button:not(.primary)");
  await frame.waitForSelector("p.note");
  seen.shown = await frame.$eval("p.note", (node) => node.textContent);
};

SCENARIOS.lists = async (page, seen) => {
  // Lists are typed a line each; items, enum values and formats are checked before anything is called, each
  // refusal saying which field (and line) and what it must be; fixed, the call goes through once.
  const args = { title: "Plan", owner: "not-a-uuid", tags: ["red", "blue"], watchers: [1, 2], ref: "r-1" };
  await show(page, { mcp: "/fixture/mcp", token: TOKEN, tool: "call_function", args: { name: "notes.create_note", args } });
  const frame = await view(page);
  await frame.waitForSelector("form.approval");
  seen.controls = await frame.evaluate(() => Object.fromEntries(["tags", "watchers", "priority", "owner"].map(
    (name) => [name, document.querySelector(`[name="${name}"]`).tagName.toLowerCase()])));
  seen.prefilled = await frame.evaluate(() => ({
    tags: document.querySelector("[name=tags]").value, watchers: document.querySelector("[name=watchers]").value }));
  seen.ownerHint = await frame.$eval("[name=owner]", (node) => node.placeholder);
  await page.screenshot({ path: `${artifacts}/apps-form-lists.png`, fullPage: true });
  const refused = async () => {
    await frame.click("form.approval button.primary");
    await frame.waitForFunction(() => document.querySelector("form.approval p.error").textContent !== "");
    const said = await frame.$eval("form.approval p.error", (node) => node.textContent);
    await frame.evaluate(() => { document.querySelector("form.approval p.error").textContent = ""; });
    return said;
  };
  seen.refused = [];
  seen.refused.push(await refused());
  await frame.fill("[name=owner]", "0b9a4f64-8d2e-4c1a-9a53-6f4f2c1d7e10");
  await frame.fill("[name=watchers]", "3\nx");
  seen.refused.push(await refused());
  await frame.fill("[name=watchers]", "3\n4\n");
  await frame.fill("[name=tags]", "red\n\n  green \n");
  await frame.fill("[name=priority]", "urgent");
  seen.refused.push(await refused());
  await frame.fill("[name=priority]", "high");
  await frame.fill("[name=due]", "2026-13-01");
  seen.refused.push(await refused());
  await page.screenshot({ path: `${artifacts}/apps-form-lists-refused.png`, fullPage: true });
  seen.stillAsking = await frame.evaluate(() => document.querySelector("form.approval button.primary").disabled === false);
  await frame.fill("[name=due]", "2026-12-24");
  await frame.click("form.approval button.primary");
  await frame.waitForSelector("dl.detail");
  seen.after = await frame.evaluate(() => document.body.innerText);
  await page.screenshot({ path: `${artifacts}/apps-form-lists-confirmed.png`, fullPage: true });
  await page.waitForFunction(() => window.hostLog.modelContext.length > 0);
  seen.modelContext = await page.evaluate(() => window.hostLog.modelContext);
};

// The scripted trial on real FastAPI apps (scripts/real-apps/views.py): each call of REAL_CALLS (JSON: a list of
// {tool, args}) shown in its view, with what it rendered; a table's Next is followed once.
SCENARIOS.real = async (page, seen) => {
  seen.calls = [];
  const calls = JSON.parse(process.env.REAL_CALLS || "[]");
  for (const [index, call] of calls.entries()) {
    const one = { tool: call.tool, args: call.args };
    seen.calls.push(one);
    if (index > 0) await page.goto(`${base}/host`, { waitUntil: "load" });
    const shown = await show(page, { mcp: "/mcp", token: TOKEN, ...call });
    one.uri = shown.uri;
    const frame = await view(page);
    await frame.waitForSelector("tbody tr, dl.detail, pre.plain, pre.error, p.note");
    one.kind = await frame.evaluate(() =>
      document.querySelector("tbody tr") ? "table" : document.querySelector("dl.detail") ? "detail" :
      document.querySelector("pre.error") ? "error" : "plain");
    one.title = await frame.$eval("header h1", (node) => node.textContent).catch(() => null);
    if (one.kind === "table") {
      one.headers = await frame.$$eval("thead th", (cells) => cells.map((cell) => cell.textContent));
      one.rows = await frame.$$eval("tbody tr", (rows) => rows.length);
      one.firstCells = await rowIds(frame);
      one.nextEnabled = await frame.$eval("nav.pager button:last-child", (button) => !button.disabled).catch(() => false);
    } else if (one.kind === "detail") {
      one.fields = await frame.$$eval("main > dl.detail > dt", (nodes) => nodes.map((node) => node.textContent));
    } else {
      one.text = await frame.evaluate(() => document.body.innerText.slice(0, 300));
    }
    await page.screenshot({ path: `${artifacts}/real-${index}.png`, fullPage: true });
    if (one.kind === "table" && one.nextEnabled) {
      await frame.click("nav.pager button:last-child");
      await frame.waitForFunction((ids) => [...document.querySelectorAll("tbody tr")].every(
        (row) => !ids.includes(row.children[0].textContent)), one.firstCells, { timeout: 10000 });
      one.nextCells = await rowIds(frame);
      await page.screenshot({ path: `${artifacts}/real-${index}-next.png`, fullPage: true });
    }
  }
};

// The approval form on a real app: each step of REAL_FORMS (JSON: a list of {label, propose: {tool, args}, edit:
// {argument: text typed}, action: "confirm" or "cancel", read: {tool, args}}) is read before, proposed, shown as
// its form (what it holds), edited, confirmed or cancelled, and read again through the host's session.
SCENARIOS.realForm = async (page, seen) => {
  seen.steps = [];
  const steps = JSON.parse(process.env.REAL_FORMS || "[]");
  const read = (call) => page.evaluate((call) => window.callTool(call), { mcp: "/mcp", token: TOKEN, ...call });
  for (const [index, step] of steps.entries()) {
    const one = { label: step.label, action: step.action };
    seen.steps.push(one);
    if (index > 0) await page.goto(`${base}/host`, { waitUntil: "load" });
    one.before = (await read(step.read)).structuredContent;
    const shown = await show(page, { mcp: "/mcp", token: TOKEN, ...step.propose });
    one.status = shown.result.structuredContent && shown.result.structuredContent.status;
    const frame = await view(page);
    await frame.waitForSelector("form.approval");
    one.form = await frame.evaluate(() => ({
      title: document.querySelector("form.approval header h1").textContent,
      effect: document.querySelector("form.approval p.effect").textContent,
      fields: [...document.querySelectorAll("label.field")].map((row) => {
        const entry = row.querySelector("input, select, textarea");
        const note = row.querySelector("small");
        return { label: row.querySelector(".name").textContent, name: entry.name, control: entry.tagName.toLowerCase() +
          (entry.type && entry.tagName === "INPUT" ? `[${entry.type}]` : ""), value: entry.value, help: note ? note.textContent : "" };
      }),
    }));
    await page.screenshot({ path: `${artifacts}/real-form-${index}.png`, fullPage: true });
    for (const [name, text] of Object.entries(step.edit || {})) await frame.fill(`[name="${name}"]`, text);
    await frame.click(step.action === "confirm" ? "form.approval button.primary" : "form.approval .actions button:not(.primary)");
    await frame.waitForSelector("dl.detail, pre.plain, pre.error, p.note, tbody tr, form.approval p.error:not(:empty)");
    one.shown = await frame.evaluate(() => document.body.innerText.slice(0, 600));
    await page.screenshot({ path: `${artifacts}/real-form-${index}-${step.action === "confirm" ? "confirmed" : "cancelled"}.png`, fullPage: true });
    await page.waitForFunction(() => window.hostLog.modelContext.length > 0, null, { timeout: 5000 }).catch(() => {});
    one.modelContext = await page.evaluate(() => window.hostLog.modelContext);
    const after = await read(step.read);
    one.after = after.isError ? { error: (after.content || []).map((part) => part.text).join("\n") } : after.structuredContent;
  }
};

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ARGS, timeout: 30000 });
  const observed = {};
  try {
    for (const name of scenarios) {
      const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
      const seen = { problems: [] };
      page.on("pageerror", (error) => seen.problems.push(String(error)));
      page.on("console", (message) => { if (message.type() === "error") seen.problems.push(message.text()); });
      try {
        await page.goto(`${base}/host`, { waitUntil: "load" });
        await SCENARIOS[name](page, seen);
      } catch (error) {
        seen.failed = String(error && error.stack || error);
        await page.screenshot({ path: `${artifacts}/apps-${name}-failed.png`, fullPage: true }).catch(() => {});
      }
      observed[name] = seen;
      await page.close();
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(observed));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack || error));
  process.exit(1);
});
