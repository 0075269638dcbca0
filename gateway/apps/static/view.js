// The view of an API function's results, an MCP Apps view (SEP-1865) the host renders in a sandboxed frame.
// It speaks the view's side of the protocol (JSON-RPC 2.0 over postMessage with the host: ui/initialize,
// tool-input, tool-result, tools/call, size-changed, update-model-context) and draws a table, a detail, a plain
// answer, or an approval form. Every string from the API or the document reaches the page through textContent
// or a form control's value: nothing is parsed as markup, no URL is followed, no attribute is set from data.
(function () {
  "use strict";

  var PROTOCOL = "2026-01-26";
  var VIEW_KEY = "openapi-mcp-gateway/view";
  var APPROVAL_KEY = "io.modelcontextprotocol/approval";
  var FOLD = 80;

  var view = null; // the function's view (gateway/apps/views.py)
  var host = { capabilities: {}, context: {} };
  var input = {}; // the arguments of the tool call this view shows
  var toolName = null;
  var pages = []; // cursors of the pages before this one (cursor paging)
  var nextId = 1;
  var waiting = {};
  var root = document.getElementById("root");

  // The protocol ---------------------------------------------------------------------------------------------

  function post(message) {
    window.parent.postMessage(message, "*");
  }

  function request(method, params) {
    var id = nextId++;
    post({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) {
      waiting[id] = { resolve: resolve, reject: reject };
    });
  }

  function notify(method, params) {
    post({ jsonrpc: "2.0", method: method, params: params || {} });
  }

  function answer(id, result) {
    post({ jsonrpc: "2.0", id: id, result: result });
  }

  var handlers = {
    "ui/notifications/tool-input": function (params) {
      input = (params && params.arguments) || {};
    },
    "ui/notifications/tool-result": function (params) {
      pages = [];
      show(params || {});
    },
    "ui/notifications/tool-cancelled": function () {
      clear();
      root.appendChild(el("p", "note", "The call was cancelled."));
      resized();
    },
    "ui/notifications/host-context-changed": function (params) {
      themed(params || {});
    },
    "ui/resource-teardown": function () {
      return {};
    },
    ping: function () {
      return {};
    },
  };

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return; // only the host speaks to the view
    var message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined) {
      var pending = waiting[message.id];
      if (!pending) return;
      delete waiting[message.id];
      if (message.error) pending.reject(new Error(String(message.error.message || "the host refused")));
      else pending.resolve(message.result);
      return;
    }
    var handle = Object.prototype.hasOwnProperty.call(handlers, message.method) ? handlers[message.method] : null;
    var result = handle ? handle(message.params) : undefined;
    if (message.id !== undefined) {
      if (handle) answer(message.id, result || {});
      else post({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "method not found" } });
    }
  });

  function start() {
    var embedded = document.getElementById("gateway-view");
    if (embedded && embedded.textContent) view = JSON.parse(embedded.textContent);
    request("ui/initialize", {
      appInfo: { name: "openapi-mcp-gateway view", version: "1" },
      appCapabilities: {},
      protocolVersion: PROTOCOL,
    }).then(function (result) {
      host.capabilities = (result && result.hostCapabilities) || {};
      themed((result && result.hostContext) || {});
      notify("ui/notifications/initialized", {});
      resized();
    });
    if (typeof ResizeObserver === "function") new ResizeObserver(resized).observe(document.body);
  }

  var lastHeight = -1;
  function resized() {
    var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === lastHeight) return;
    lastHeight = height;
    notify("ui/notifications/size-changed", { height: height });
  }

  function themed(context) {
    for (var key in context) host.context[key] = context[key];
    if (context.theme === "dark" || context.theme === "light") document.documentElement.dataset.theme = context.theme;
    var variables = context.styles && context.styles.variables;
    if (variables) {
      for (var name in variables) {
        // Only the spec's CSS variables, set through the CSSOM: a value cannot become markup or a rule.
        if (/^--[a-z0-9-]+$/.test(name) && typeof variables[name] === "string") {
          document.documentElement.style.setProperty(name, variables[name]);
        }
      }
    }
    var info = context.toolInfo;
    if (info && info.tool && typeof info.tool.name === "string") toolName = info.tool.name;
  }

  function call(name, args) {
    return request("tools/call", { name: name, arguments: args });
  }

  function tell(text) {
    // The model learns what the person did: quietly where the host takes context updates, else as a message.
    var content = [{ type: "text", text: text }];
    if (host.capabilities.updateModelContext) return request("ui/update-model-context", { content: content });
    if (host.capabilities.message) return request("ui/message", { role: "user", content: content });
    return Promise.resolve();
  }

  // Building the page (textContent only) ----------------------------------------------------------------------

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function button(label, onClick, className) {
    var node = el("button", className || "", label);
    node.type = "button";
    node.addEventListener("click", onClick);
    return node;
  }

  function clear() {
    while (root.firstChild) root.removeChild(root.firstChild);
  }

  function shown(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  function cell(value) {
    var td = el("td");
    if (value === null || value === undefined) {
      td.className = "empty";
      td.textContent = "—";
      return td;
    }
    if (typeof value === "number") td.className = "number";
    folded(td, shown(value));
    return td;
  }

  function folded(node, text) {
    // A long value shows its start; "more" unfolds the rest (as text).
    if (text.length <= FOLD) {
      node.textContent = text;
      return;
    }
    var span = el("span", "", text.slice(0, FOLD) + "…");
    var more = button("more", function () {
      var open = more.textContent === "more";
      span.textContent = open ? text : text.slice(0, FOLD) + "…";
      more.textContent = open ? "less" : "more";
    }, "fold");
    node.appendChild(span);
    node.appendChild(more);
  }

  function at(value, path) {
    for (var i = 0; path && i < path.length; i++) {
      if (value === null || typeof value !== "object") return undefined;
      value = value[path[i]];
    }
    return value;
  }

  function texts(result) {
    var found = [];
    (result.content || []).forEach(function (block) {
      if (block && block.type === "text" && typeof block.text === "string") found.push(block.text);
    });
    return found;
  }

  function data(result) {
    if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
    var text = texts(result)[0];
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text);
    } catch (error) {
      return undefined;
    }
  }

  // What a result shows ---------------------------------------------------------------------------------------

  function show(result) {
    var meta = result._meta || {};
    if (meta[VIEW_KEY] && typeof meta[VIEW_KEY] === "object") view = meta[VIEW_KEY];
    clear();
    var structured = result.structuredContent;
    if (structured && structured.status === "awaiting_approval" && meta[APPROVAL_KEY]) {
      form(structured, meta[APPROVAL_KEY]);
    } else if (result.isError) {
      root.appendChild(heading());
      root.appendChild(el("pre", "error", texts(result).join("\n")));
    } else {
      var value = data(result);
      root.appendChild(heading());
      if (value === undefined) plain(result);
      else if (view && view.kind === "table" && Array.isArray(at(value, view.rows))) table(value);
      else if (Array.isArray(value) && value.length && typeof value[0] === "object") table(value, true);
      else if (value !== null && typeof value === "object" && !Array.isArray(value)) root.appendChild(detail(value, 0));
      else plain(result);
    }
    resized();
  }

  function heading() {
    var title = el("header");
    title.appendChild(el("h1", "", view ? view.title : "Result"));
    if (view) title.appendChild(el("code", "", view.function));
    return title;
  }

  function plain(result) {
    root.appendChild(el("pre", "plain", texts(result).join("\n")));
  }

  function columnsOf(rows) {
    if (view && view.columns && view.columns.length) return view.columns;
    var seen = {};
    var columns = [];
    rows.slice(0, 50).forEach(function (row) {
      if (row === null || typeof row !== "object") return;
      Object.keys(row).forEach(function (name) {
        if (!seen[name] && columns.length < 12) {
          seen[name] = true;
          columns.push({ name: name, title: name });
        }
      });
    });
    return columns;
  }

  function table(value, bare) {
    var rows = bare ? value : at(value, view.rows);
    var columns = columnsOf(rows);
    var order = { by: null, down: false };
    var grid = el("table", "rows");
    var head = el("thead");
    var line = el("tr");
    columns.forEach(function (column) {
      var th = el("th", "", column.title);
      th.title = column.name;
      th.tabIndex = 0;
      th.setAttribute("aria-sort", "none");
      th.addEventListener("click", function () {
        order.down = order.by === column.name ? !order.down : false;
        order.by = column.name;
        Array.prototype.forEach.call(line.children, function (other) {
          other.setAttribute("aria-sort", "none");
        });
        th.setAttribute("aria-sort", order.down ? "descending" : "ascending");
        body(sorted(rows, column.name, order.down));
      });
      line.appendChild(th);
    });
    head.appendChild(line);
    grid.appendChild(head);
    var tbody = el("tbody");
    grid.appendChild(tbody);
    function body(list) {
      var fragment = document.createDocumentFragment();
      list.forEach(function (row) {
        var tr = el("tr");
        columns.forEach(function (column) {
          tr.appendChild(cell(row !== null && typeof row === "object" ? row[column.name] : row));
        });
        fragment.appendChild(tr);
      });
      tbody.textContent = "";
      tbody.appendChild(fragment);
    }
    body(rows);
    var scroller = el("div", "scroll");
    scroller.appendChild(grid);
    root.appendChild(scroller);
    root.appendChild(pager(value, rows));
  }

  function sorted(rows, name, down) {
    var copy = rows.slice();
    copy.sort(function (a, b) {
      var x = a && typeof a === "object" ? a[name] : undefined;
      var y = b && typeof b === "object" ? b[name] : undefined;
      if (x === y) return 0;
      if (x === null || x === undefined) return 1; // empty cells last, either way
      if (y === null || y === undefined) return -1;
      var less = typeof x === "number" && typeof y === "number" ? x < y : shown(x).localeCompare(shown(y)) < 0;
      return (less ? -1 : 1) * (down ? -1 : 1);
    });
    return copy;
  }

  function pager(value, rows) {
    var bar = el("nav", "pager");
    var paging = view && view.paging;
    var args = functionArgs();
    var count = el("span", "count", rows.length + (rows.length === 1 ? " row" : " rows"));
    if (!paging) {
      bar.appendChild(count);
      return bar;
    }
    var current = args[paging.arg];
    var next = null;
    var previous = null;
    if (paging.style === "cursor") {
      var cursor = paging.next ? at(value, paging.next) : null;
      if (!paging.next && paging.last && rows.length) {
        var last = rows[rows.length - 1];
        cursor = last && typeof last === "object" ? last[paging.last] : null;
        if (value && typeof value === "object" && value.has_more === false) cursor = null; // Stripe's end of list
      }
      if (typeof cursor === "string" || typeof cursor === "number") next = cursor;
      if (pages.length) previous = pages[pages.length - 1];
    } else if (paging.style === "page") {
      var page = Number(current) || 1;
      next = rows.length ? page + 1 : null;
      if (page > 1) previous = page - 1;
    } else {
      var offset = Number(current) || 0;
      next = rows.length ? offset + rows.length : null;
      if (offset > 0) previous = Math.max(offset - (Number(args[paging.size]) || rows.length || 1), 0);
    }
    var back = button("Previous", function () {
      if (paging.style === "cursor") pages.pop();
      go(previous === "" ? null : previous);
    });
    back.disabled = previous === null;
    var forward = button("Next", function () {
      if (paging.style === "cursor") pages.push(current === undefined || current === null ? "" : current);
      go(next);
    });
    forward.disabled = next === null;
    bar.appendChild(back);
    bar.appendChild(count);
    bar.appendChild(forward);
    return bar;
  }

  function functionArgs() {
    if (isGeneric()) return (input && typeof input.args === "object" && input.args) || {};
    return input || {};
  }

  function isGeneric() {
    var name = toolName || (view && view.tool) || "call_function";
    return name === "call_function";
  }

  function go(value) {
    // Call the same function again through the host, with the page argument changed.
    var args = {};
    var old = functionArgs();
    for (var key in old) args[key] = old[key];
    if (value === null || value === undefined) delete args[view.paging.arg];
    else args[view.paging.arg] = value;
    var generic = isGeneric();
    input = generic ? { name: view.function, args: args } : args;
    var tool = generic ? "call_function" : toolName || view.tool;
    root.classList.add("busy");
    call(tool, input).then(
      function (result) {
        root.classList.remove("busy");
        show(result || {});
      },
      function (error) {
        root.classList.remove("busy");
        root.appendChild(el("p", "error", "The host refused the call: " + error.message));
        resized();
      }
    );
  }

  function detail(value, depth) {
    var list = el("dl", "detail");
    var names = Object.keys(value);
    if (depth === 0 && view && view.kind === "detail") {
      var known = view.columns.map(function (column) {
        return column.name;
      });
      names = known.filter(function (name) {
        return Object.prototype.hasOwnProperty.call(value, name);
      }).concat(names.filter(function (name) {
        return known.indexOf(name) < 0;
      }));
    }
    names.forEach(function (name) {
      list.appendChild(el("dt", "", name));
      var dd = el("dd");
      var item = value[name];
      if (item !== null && typeof item === "object" && !Array.isArray(item) && depth < 2) {
        dd.appendChild(detail(item, depth + 1));
      } else if (Array.isArray(item) && item.length && item.every(isRecord) && depth < 2) {
        dd.appendChild(lines(item));
      } else if (item === null || item === undefined) {
        dd.className = "empty";
        dd.textContent = "—";
      } else {
        folded(dd, shown(item));
      }
      list.appendChild(dd);
    });
    return list;
  }

  function isRecord(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  function lines(rows) {
    // A list inside one object (an order's lines): a small table of its first rows, columns from their keys.
    var columns = [];
    rows.slice(0, 50).forEach(function (row) {
      Object.keys(row).forEach(function (name) {
        if (columns.indexOf(name) < 0 && columns.length < 12) columns.push(name);
      });
    });
    var grid = el("table", "rows lines");
    var line = el("tr");
    columns.forEach(function (name) {
      line.appendChild(el("th", "", name));
    });
    var head = el("thead");
    head.appendChild(line);
    grid.appendChild(head);
    var body = el("tbody");
    rows.slice(0, 50).forEach(function (row) {
      var tr = el("tr");
      columns.forEach(function (name) {
        tr.appendChild(cell(row[name]));
      });
      body.appendChild(tr);
    });
    grid.appendChild(body);
    var box = el("div");
    box.appendChild(grid);
    if (rows.length > 50) box.appendChild(el("p", "note", "… and " + (rows.length - 50) + " more"));
    return box;
  }

  // The approval form -------------------------------------------------------------------------------------------

  function form(proposal, approval) {
    var fields = (view && view.args) || [];
    var proposed = proposal.arguments || {};
    var box = el("form", "approval");
    box.noValidate = true;
    var title = el("header");
    title.appendChild(el("h1", "", (view ? view.title : proposal.function) || "Approve a call"));
    title.appendChild(el("code", "", String(proposal.function)));
    box.appendChild(title);
    var effect = String(proposal.effect || (view && view.effect) || "write");
    box.appendChild(el("p", "effect " + (effect === "destructive" ? "danger" : ""), effect === "destructive"
      ? "This call deletes or overwrites data. Check the values, then confirm."
      : "This call changes data. Check the values, then confirm."));
    var controls = {};
    var known = {};
    // Optional headers the agent left out (an API version, an idempotency key) fold under "More arguments".
    var more = el("details", "more");
    var tucked = 0;
    more.appendChild(el("summary"));
    fields.forEach(function (field) {
      known[field.name] = true;
      var fold = field.secondary && !Object.prototype.hasOwnProperty.call(proposed, field.name);
      if (fold) tucked++;
      controls[field.name] = control(fold ? more : box, field, proposed[field.name]);
    });
    Object.keys(proposed).forEach(function (name) {
      if (!known[name]) {
        var field = { name: name, title: name, type: "json", required: false, nullable: true, description: "" };
        controls[name] = control(box, field, proposed[name]);
      }
    });
    if (tucked) {
      more.firstChild.textContent = "More arguments (" + tucked + ")";
      box.appendChild(more);
    }
    var problem = el("p", "error");
    box.appendChild(problem);
    var actions = el("div", "actions");
    var confirm = button("Confirm", function () {
      var values = {};
      try {
        for (var name in controls) {
          var got = controls[name]();
          if (got !== undefined) values[name] = got;
        }
      } catch (error) {
        problem.textContent = error.message;
        resized();
        return;
      }
      confirm.disabled = cancel.disabled = true;
      call("approve_call", { handle: approval.handle, arguments: values }).then(function (result) {
        result = result || {};
        show(result);
        var said = texts(result).join("\n").slice(0, 2000);
        tell("The person approved the call of " + proposal.function + " with " + JSON.stringify(values) +
          (result.isError ? "; it failed: " : "; it answered: ") + said);
      }, failed);
    }, effect === "destructive" ? "primary danger" : "primary");
    var cancel = button("Cancel", function () {
      confirm.disabled = cancel.disabled = true;
      call("cancel_call", { handle: approval.handle }).then(function () {
        clear();
        root.appendChild(el("p", "note", "Cancelled: " + proposal.function + " was not called."));
        resized();
        tell("The person cancelled the call of " + proposal.function + "; nothing was changed.");
      }, failed);
    });
    function failed(error) {
      confirm.disabled = cancel.disabled = false;
      problem.textContent = "The host refused the call: " + error.message;
      resized();
    }
    actions.appendChild(confirm);
    actions.appendChild(cancel);
    box.appendChild(actions);
    box.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    root.appendChild(box);
  }

  // What a string of a format must look like, and how a problem names it; a value the check cannot judge is left
  // to the API, which validates every call anyway.
  var FORMATS = {
    uuid: [/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "a UUID (8-4-4-4-12 hexadecimal digits)",
      "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"],
    date: [/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, "a date as YYYY-MM-DD", "YYYY-MM-DD"],
    "date-time": [/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$/,
      "a date and time as YYYY-MM-DDThh:mm:ssZ", "YYYY-MM-DDThh:mm:ssZ"],
    email: [/^[^\s@]+@[^\s@]+$/, "an email address", "name@example.com"],
    uri: [/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/, "an absolute URI such as https://example.com/a", "https://"],
  };

  function formatOf(field) {
    // The check of the field's format, if the form knows it; the document names it, so only own keys count.
    return typeof field.format === "string" && Object.prototype.hasOwnProperty.call(FORMATS, field.format)
      ? FORMATS[field.format] : null;
  }

  function scalar(value) {
    return typeof value === "string" || typeof value === "number";
  }

  function control(box, field, value) {
    // One labelled input for an argument; returns the function that reads its value back (or throws saying why).
    var row = el("label", "field");
    var label = field.title || field.name;
    var name = el("span", "name", label);
    if (field.required) name.appendChild(el("span", "required", " *"));
    row.appendChild(name);
    var kind = field.type;
    // A list the agent proposed as something else than plain items stays editable as JSON.
    if (kind === "list" && !(value === undefined || value === null || (Array.isArray(value) && value.every(scalar)))) {
      kind = "json";
    }
    var format = formatOf(field);
    var entry;
    if (kind === "list") {
      entry = el("textarea");
      entry.className = "list";
      entry.rows = Math.min(Math.max(Array.isArray(value) ? value.length : 0, 2), 8);
      entry.value = Array.isArray(value) ? value.map(String).join("\n") : "";
    } else if (field.choices) {
      entry = el("select");
      if (!field.required || value === undefined) entry.appendChild(option("", "—"));
      field.choices.forEach(function (choice) {
        entry.appendChild(option(String(choice), String(choice)));
      });
      entry.value = value === undefined || value === null ? "" : String(value);
    } else if (field.type === "boolean") {
      entry = el("select");
      entry.appendChild(option("", "—"));
      entry.appendChild(option("true", "true"));
      entry.appendChild(option("false", "false"));
      entry.value = value === true ? "true" : value === false ? "false" : "";
    } else if (kind === "json") {
      entry = el("textarea");
      entry.rows = 3;
      entry.value = value === undefined ? "" : JSON.stringify(value, null, 2);
    } else {
      entry = el("input");
      entry.type = field.type === "string" ? "text" : "number";
      if (field.type === "integer") entry.step = "1";
      if (format && field.type === "string") entry.placeholder = format[2];
      entry.value = value === undefined || value === null ? "" : String(value);
    }
    entry.name = field.name;
    row.appendChild(entry);
    var help = field.description;
    if (kind === "list") {
      help = (help ? help + (/[.!?]$/.test(help) ? " " : ". ") : "") + "One per line" + (field.choices ? ", from: " + field.choices.join(", ") : "") + ".";
    }
    if (help) row.appendChild(el("small", "", help));
    box.appendChild(row);
    return function () {
      var text = entry.value;
      if (kind === "list") {
        var lines = text.split("\n").map(function (line) {
          return line.trim();
        }).filter(function (line) {
          return line !== "";
        });
        if (!lines.length && !field.required && !Array.isArray(value)) return value === null ? null : undefined;
        return lines.map(function (line, index) {
          return item(field, field.item, line, label + " (line " + (index + 1) + ")");
        });
      }
      if (text === "") {
        if (field.required) throw new Error(label + " is required.");
        return value === null ? null : undefined;
      }
      if (kind === "json") {
        try {
          return JSON.parse(text);
        } catch (error) {
          throw new Error(label + " must be JSON.");
        }
      }
      if (field.type === "boolean") return text === "true";
      return item(field, field.type, text, label);
    };
  }

  function item(field, type, text, label) {
    // One value typed as text: a choice of the enum, a number, or a string of the field's format.
    if (field.choices) {
      var match = field.choices.filter(function (choice) {
        return String(choice) === text;
      });
      if (match.length) return match[0];
      if (field.type === "list") throw new Error(label + " must be one of: " + field.choices.join(", ") + ".");
      return text;
    }
    if (type === "integer" || type === "number") {
      var number = Number(text);
      if (!isFinite(number) || (type === "integer" && Math.floor(number) !== number)) {
        throw new Error(label + " must be " + (type === "integer" ? "a whole number." : "a number."));
      }
      return number;
    }
    var format = formatOf(field);
    if (format && !format[0].test(text)) throw new Error(label + " must be " + format[1] + ".");
    return text;
  }

  function option(value, label) {
    var node = el("option", "", label);
    node.value = value;
    return node;
  }

  start();
})();
