// A minimal MCP Apps host for the browser tests of the gateway's views (tests/gateway/test_apps_browser.py): the
// official MCP Apps SDK's AppBridge is the host side of the view, the official TypeScript MCP client talks to the
// gateway (2026-07-28, declaring the UI extension), and the view runs in a sandboxed iframe (scripts only, an
// opaque origin) as hosts run it. esbuild bundles this file for the page at test setup.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const UI = "io.modelcontextprotocol/ui";
const HOST = { name: "gateway-test-host", version: "1.0.0" };

// What the test reads back: what the view told the model, and the sizes it asked for.
window.hostLog = { modelContext: [], messages: [], sizes: [] };

async function connect(mcp, token, handshake) {
  // `auto` probes 2026-07-28 first (each request declares the extension); the SDK's default is the initialize
  // handshake, after which the gateway's session id carries the declaration.
  const client = new Client(HOST, {
    capabilities: { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } },
    ...(handshake ? {} : { versionNegotiation: { mode: "auto" } }),
  });
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp, location.href), { requestInit: { headers } }));
  return client;
}

// Run tool `tool` with `args` as a host does for a person: read the tool's view, show it, hand it the call's
// input and result. Answers what the host saw: the view's URI, its resource's media type and _meta, the result.
window.showCall = async ({ mcp, token, tool, args, handshake }) => {
  const client = await connect(mcp, token, handshake);
  const { tools } = await client.listTools();
  const definition = tools.find((candidate) => candidate.name === tool);
  const uri = definition && definition._meta && definition._meta.ui && definition._meta.ui.resourceUri;
  if (!uri) throw new Error(`tool ${tool} links no view`);
  const contents = (await client.readResource({ uri })).contents[0];
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.id = "view";
  document.getElementById("views").replaceChildren(frame);
  const bridge = new AppBridge(
    client,
    HOST,
    { serverTools: {}, serverResources: {}, updateModelContext: { text: {} }, message: { text: {} } },
    { hostContext: { theme: "light", displayMode: "inline", toolInfo: { tool: definition } } },
  );
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
    window.hostLog.sizes.push(height);
  };
  bridge.onupdatemodelcontext = async (params) => { window.hostLog.modelContext.push(params); return {}; };
  bridge.onmessage = async (params) => { window.hostLog.messages.push(params); return {}; };
  // Listening before the view's script runs: its ui/initialize is its first message.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  window.hostBridge = bridge;
  frame.srcdoc = contents.text;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name: tool, arguments: args });
  await bridge.sendToolResult(result);
  return { uri, mimeType: contents.mimeType, meta: contents._meta || null, result, version: client.getNegotiatedProtocolVersion() || null };
};

// A call the test makes as the model would (no view): to set up data, or to look at what a view changed.
window.callTool = async ({ mcp, token, tool, args }) => (await connect(mcp, token)).callTool({ name: tool, arguments: args });
