// A real OpenID Connect provider for the tests: panva's certified oidc-provider (installed by
// scripts/install-node-tools) on 127.0.0.1, configured from the command line. tests/oauth/idp/provider.py starts it.
//
//   .tools/bin/node tests/oauth/idp/provider.mjs --clients clients.json --accounts accounts.json \
//       [--port 0] [--api https://api.example.test] [--api-scopes "orders:read orders:write"] \
//       [--access-token-ttl 30] [--id-token-ttl 300] [--refresh-token-ttl 86400] [--access-token-alg RS256|ES256] \
//       [--rotate-refresh-tokens true|false] [--oidc-provider DIR]
//
// clients.json: a list of oidc-provider client metadata, e.g. {"client_id": "gateway", "client_secret": "...",
// "redirect_uris": ["http://127.0.0.1:8000/oauth/callback"], "token_endpoint_auth_method": "client_secret_post",
// "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"]}.
// accounts.json: {"bob": {"name": "Bob", "email": "bob@example.test"}, ...}; the key is the `sub`.
//
// What it serves, at issuer http://127.0.0.1:PORT:
// - discovery, JWKS (an RS256 and an ES256 key, made at start), authorization code with PKCE (S256 required),
//   `state`, `nonce`, userinfo, revocation (RFC 7009), introspection (RFC 7662, opaque tokens only);
// - resource indicators (RFC 8707): `resource=<--api>` gives a JWT access token (typ at+jwt) with aud=<--api> and
//   the granted --api-scopes in `scope`; without `resource` on the token request an openid grant gets an opaque
//   token for userinfo (oidc-provider's rule);
// - a refresh token for every client allowed the refresh_token grant (no offline_access or prompt=consent needed),
//   rotated on each use unless --rotate-refresh-tokens false (a rotated-out token used again revokes the grant);
// - ID tokens carrying the account's name (scope profile) and email, email_verified (scope email);
// - token exchange (RFC 8693), which oidc-provider does not ship: see tokenExchange below;
// - login through oidc-provider's devInteractions pages: any login name of accounts.json, any password.
//
// On stdout one line, once listening: "oidc-provider ready at ISSUER admin ADMIN_URL". Logs go to stderr.
// The admin server (its own 127.0.0.1 port, so that it stays up while the provider is "down") switches faults:
//   GET  ADMIN_URL/faults  the current switches
//   POST ADMIN_URL/faults  {"refresh": "ok"|"refuse", "token_delay_ms": N, "down": bool,
//                           "id_token": "ok"|"wrong_audience"|"wrong_issuer"|"wrong_nonce"|"expired"|"wrong_signature"|"unknown_key",
//                           "access_token": "ok"|"wrong_audience"}
//                          (fields left out keep their value); answers the switches now in force.
import * as crypto from "node:crypto";
import { readFileSync } from "node:fs";
import * as http from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

// oidc-provider prints notices with console.info; stdout carries only the ready line.
console.info = console.error;

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    clients: { type: "string" },
    accounts: { type: "string" },
    api: { type: "string", default: "https://api.example.test" },
    "api-scopes": { type: "string", default: "orders:read orders:write" },
    "access-token-ttl": { type: "string", default: "30" },
    "id-token-ttl": { type: "string", default: "300" },
    "refresh-token-ttl": { type: "string", default: "86400" },
    "access-token-alg": { type: "string", default: "RS256" },
    "rotate-refresh-tokens": { type: "string", default: "true" },
    "oidc-provider": { type: "string", default: join(here, "../../../.tools/npm/node_modules/oidc-provider") },
  },
  strict: true,
});
if (!args.clients || !args.accounts) {
  console.error("provider.mjs: --clients FILE and --accounts FILE are required");
  process.exit(2);
}
if (!["RS256", "ES256"].includes(args["access-token-alg"])) {
  console.error(`provider.mjs: --access-token-alg must be RS256 or ES256, not ${args["access-token-alg"]}`);
  process.exit(2);
}
const seconds = (name) => {
  const value = Number(args[name]);
  if (!Number.isInteger(value) || value <= 0) {
    console.error(`provider.mjs: --${name} must be a positive whole number of seconds, not ${args[name]}`);
    process.exit(2);
  }
  return value;
};
const accessTokenTTL = seconds("access-token-ttl");
const idTokenTTL = seconds("id-token-ttl");
const refreshTokenTTL = seconds("refresh-token-ttl");
const api = args.api;
const apiScopes = args["api-scopes"];
const clients = JSON.parse(readFileSync(args.clients, "utf8"));
const accounts = JSON.parse(readFileSync(args.accounts, "utf8"));

const packageJson = createRequire(join(args["oidc-provider"], "/"))("./package.json");
const { Provider, errors } = await import(pathToFileURL(join(args["oidc-provider"], packageJson.main)).href);

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

// The switches the admin server sets; all off at start.
const HEALTHY = Object.freeze({ refresh: "ok", token_delay_ms: 0, down: false, id_token: "ok", access_token: "ok" });
const ID_TOKEN_FAULTS = ["ok", "wrong_audience", "wrong_issuer", "wrong_nonce", "expired", "wrong_signature", "unknown_key"];
const ACCESS_TOKEN_FAULTS = ["ok", "wrong_audience"];
// The audience of access tokens under the "wrong_audience" fault: an API the gateway was not configured for.
const ANOTHER_API = "https://another-api.example.test";
let faults = { ...HEALTHY };

// Signing keys, new each start: the JWKS publishes RS256 and ES256; `stranger` signs tokens nobody can verify.
const signing = {
  RS256: crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey,
  ES256: crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey,
};
const stranger = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
const jwks = {
  keys: Object.entries(signing).map(([alg, key]) => ({
    ...key.export({ format: "jwk" }),
    kid: `${alg.toLowerCase()}-${crypto.randomBytes(4).toString("hex")}`,
    alg,
    use: "sig",
  })),
};
const kidOf = Object.fromEntries(jwks.keys.map((jwk) => [jwk.alg, jwk.kid]));

const b64 = (value) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
const fromB64 = (part) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
const signOptions = (alg, key) => (alg === "ES256" ? { key, dsaEncoding: "ieee-p1363" } : key);

function signJwt(header, payload, key) {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${crypto.sign("sha256", Buffer.from(input), signOptions(header.alg, key)).toString("base64url")}`;
}

// {header, claims} of a JWT this provider signed (with any of its keys), or undefined.
function verifiedJwt(token) {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const header = fromB64(parts[0]);
    const key = signing[header.alg];
    if (!key || header.kid !== kidOf[header.alg]) return undefined;
    const input = Buffer.from(`${parts[0]}.${parts[1]}`);
    const signature = Buffer.from(parts[2], "base64url");
    const publicKey = crypto.createPublicKey(key);
    if (!crypto.verify("sha256", input, signOptions(header.alg, publicKey), signature)) return undefined;
    return { header, claims: fromB64(parts[1]) };
  } catch {
    return undefined;
  }
}

// The ID token as the fault in force spoils it; the other claims stay as issued.
function spoilIdToken(idToken, fault) {
  const [headerPart, payloadPart] = idToken.split(".");
  const header = fromB64(headerPart);
  const payload = fromB64(payloadPart);
  const now = Math.floor(Date.now() / 1000);
  switch (fault) {
    case "wrong_audience":
      payload.aud = "another-client";
      break;
    case "wrong_issuer":
      payload.iss = "http://127.0.0.1:9/another-issuer";
      break;
    case "wrong_nonce":
      payload.nonce = "not-the-nonce-that-was-sent";
      break;
    case "expired":
      Object.assign(payload, { iat: now - 600, exp: now - 300 });
      break;
    case "wrong_signature":
      return signJwt(header, payload, stranger);
    case "unknown_key":
      // As from a key rotated in after the client fetched the keys, but never published: no JWKS has it.
      return signJwt({ ...header, alg: "RS256", kid: "not-published" }, payload, stranger);
  }
  return signJwt(header, payload, signing[header.alg]);
}

// A JWT access token re-signed for ANOTHER_API, as a provider whose API settings are wrong issues it.
function spoilAccessToken(accessToken) {
  const verified = verifiedJwt(accessToken);
  if (!verified) return accessToken;
  return signJwt(verified.header, { ...verified.claims, aud: ANOTHER_API }, signing[verified.header.alg]);
}

// The one resource server: the API, whose access tokens are JWTs for aud=<--api>.
function apiResourceServer(resource) {
  if (resource !== api) throw new errors.InvalidTarget(`unknown resource ${JSON.stringify(resource)}`);
  return {
    scope: apiScopes,
    audience: api,
    accessTokenTTL,
    accessTokenFormat: "jwt",
    jwt: { sign: { alg: args["access-token-alg"], kid: kidOf[args["access-token-alg"]] } },
  };
}

async function findAccount(_ctx, sub) {
  const account = accounts[sub];
  if (!account) return undefined;
  return {
    accountId: sub,
    async claims() {
      return { sub, name: account.name, email: account.email, email_verified: true };
    },
  };
}

const rotateRefreshTokens = args["rotate-refresh-tokens"] === "true";

const configuration = {
  clients,
  findAccount,
  jwks,
  claims: { openid: ["sub"], profile: ["name"], email: ["email", "email_verified"] },
  scopes: ["openid", "offline_access", "profile", "email"],
  responseTypes: ["code"],
  pkce: { required: () => true },
  // Claims by scope go into the ID token too, as most providers do (OIDC Core §5.4 would keep them to userinfo).
  conformIdTokenClaims: false,
  cookies: { keys: [crypto.randomBytes(32).toString("hex")] },
  features: {
    devInteractions: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    userinfo: { enabled: true },
    resourceIndicators: { enabled: true, getResourceServerInfo: async (_ctx, resource) => apiResourceServer(resource) },
  },
  // Policy: every client allowed the refresh_token grant gets a refresh token, tied to the grant, not the session.
  async issueRefreshToken(_ctx, client) {
    return client.grantTypeAllowed("refresh_token");
  },
  expiresWithSession: async () => false,
  rotateRefreshToken() {
    // The refresh fault answers here: after the token is found and before anything is consumed.
    if (faults.refresh === "refuse") throw new errors.InvalidGrant("refresh refused (test fault)");
    return rotateRefreshTokens;
  },
  ttl: {
    AccessToken: accessTokenTTL,
    AuthorizationCode: 60,
    IdToken: idTokenTTL,
    RefreshToken: refreshTokenTTL,
    Grant: refreshTokenTTL,
    Interaction: 600,
    Session: 86400,
  },
  renderError(ctx, out) {
    ctx.type = "html";
    ctx.body = `<!DOCTYPE html><title>oidc-provider error</title><pre id="error">${JSON.stringify(out)
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")}</pre>`;
  },
};

// RFC 8693 token exchange, minimal: a live subject_token of type access_token that this provider issued to the
// calling client (opaque, or a JWT it signed) becomes a JWT access token for the API (`resource` or `audience`
// naming anything else is invalid_target; naming nothing means the API). Its scope is what `scope` asks (all
// otherwise) among the API's scopes that the subject token holds or that the person granted this client for the
// API (the opaque token's grant); asking more is invalid_scope. No actor tokens (delegation), no refresh token.
async function tokenExchange(ctx) {
  const { client, params } = ctx.oidc;
  for (const name of ["subject_token", "subject_token_type"]) {
    if (!params[name]) throw new errors.InvalidRequest(`missing required parameter '${name}'`);
  }
  if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
    throw new errors.InvalidRequest(`unsupported subject_token_type; use ${ACCESS_TOKEN_TYPE}`);
  }
  if (params.actor_token || params.actor_token_type) {
    throw new errors.InvalidRequest("actor_token (delegation) is not supported");
  }
  if (params.requested_token_type && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
    throw new errors.InvalidRequest(`unsupported requested_token_type; use ${ACCESS_TOKEN_TYPE}`);
  }
  const targets = new Set([params.resource, params.audience].filter(Boolean));
  if (targets.size > 1) throw new errors.InvalidTarget("resource and audience name different targets");
  const [target = api] = targets;
  const resourceServer = new ctx.oidc.provider.ResourceServer(target, apiResourceServer(target));

  // RFC 8693 §2.2.2: an invalid or unacceptable subject_token is invalid_request.
  const subject = await subjectToken(ctx.oidc.provider, params.subject_token);
  if (!subject || subject.exp <= Math.floor(Date.now() / 1000)) {
    throw new errors.InvalidRequest("subject_token is invalid, expired or revoked");
  }
  if (subject.clientId !== client.clientId) {
    throw new errors.InvalidRequest("subject_token was issued to another client");
  }
  const grant = subject.grantId && (await ctx.oidc.provider.Grant.find(subject.grantId));
  if (subject.grantId && (!grant || grant.clientId !== client.clientId)) {
    throw new errors.InvalidRequest("subject_token's grant is gone");
  }
  if (!(await findAccount(ctx, subject.accountId))) throw new errors.InvalidRequest("subject_token's account is gone");

  const granted = grant ? grant.getResourceScope(target).split(" ") : [];
  const held = new Set([...(subject.scope || "").split(" "), ...granted]);
  const allowed = [...resourceServer.scopes].filter((scope) => held.has(scope));
  const asked = params.scope ? params.scope.split(" ") : allowed;
  const beyond = asked.filter((scope) => !allowed.includes(scope));
  if (beyond.length) throw new errors.InvalidScope("scope was not granted for this target", beyond.join(" "));
  if (!asked.length) throw new errors.InvalidScope("no scope of this target was granted");

  const token = new ctx.oidc.provider.AccessToken({
    accountId: subject.accountId,
    client,
    grantId: subject.grantId,
    gty: "token_exchange",
    scope: asked.join(" "),
  });
  token.resourceServer = resourceServer;
  ctx.oidc.entity("AccessToken", token);
  const accessToken = await token.save();
  // RFC 8693 §2.2.1
  ctx.body = {
    access_token: accessToken,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: "Bearer",
    expires_in: token.expiration,
    scope: token.scope,
  };
}

// {accountId, clientId, grantId, scope, exp} of a live access token of this provider, or undefined. Opaque
// tokens are looked up (so revocation reaches them); JWT access tokens are not stored, so one is taken on its
// signature, `iss` and `exp` alone, as the API takes it, and has no grant.
async function subjectToken(provider, value) {
  const jwt = verifiedJwt(value);
  if (jwt) {
    const { header, claims } = jwt;
    if (header.typ !== "at+jwt" || claims.iss !== provider.issuer) return undefined;
    return { accountId: claims.sub, clientId: claims.client_id, scope: claims.scope, exp: claims.exp };
  }
  return provider.AccessToken.find(value);
}

// The provider's socket is bound before the provider exists, so the issuer names the real port.
const server = http.createServer();
const listen = (target, port) =>
  new Promise((resolve, reject) => {
    target.once("error", reject);
    target.listen(port, "127.0.0.1", () => {
      target.off("error", reject);
      resolve(target.address().port);
    });
  });
const port = await listen(server, Number(args.port));
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, configuration);
provider.registerGrantType(TOKEN_EXCHANGE, tokenExchange, [
  "audience",
  "resource",
  "scope",
  "requested_token_type",
  "subject_token",
  "subject_token_type",
  "actor_token",
  "actor_token_type",
]);

provider.use(async (ctx, next) => {
  const started = Date.now();
  if (ctx.path === "/token" && faults.token_delay_ms > 0) {
    await new Promise((resolve) => setTimeout(resolve, faults.token_delay_ms));
  }
  await next();
  if (ctx.path === "/token" && ctx.status === 200 && ctx.body?.id_token && faults.id_token !== "ok") {
    ctx.body.id_token = spoilIdToken(ctx.body.id_token, faults.id_token);
  }
  if (ctx.path === "/token" && ctx.status === 200 && ctx.body?.access_token && faults.access_token !== "ok") {
    ctx.body.access_token = spoilAccessToken(ctx.body.access_token);
  }
  console.error(`${ctx.method} ${ctx.path} ${ctx.status} ${Date.now() - started}ms`);
});
for (const event of ["server_error", "grant.error", "authorization.error", "revocation.error", "introspection.error"]) {
  provider.on(event, (_ctx, error) => console.error(`${event}: ${error.message} ${error.error_description || ""}`));
}
server.on("request", provider.callback());

// "down": the provider's port refuses connections (open ones are cut); the process and its state live on.
async function setDown(down) {
  if (down && server.listening) {
    await new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    });
  } else if (!down && !server.listening) {
    await listen(server, port);
  }
}

function checkedFaults(body) {
  const next = { ...faults };
  for (const [name, value] of Object.entries(body)) {
    const ok =
      (name === "refresh" && ["ok", "refuse"].includes(value)) ||
      (name === "token_delay_ms" && Number.isInteger(value) && value >= 0) ||
      (name === "down" && typeof value === "boolean") ||
      (name === "id_token" && ID_TOKEN_FAULTS.includes(value)) ||
      (name === "access_token" && ACCESS_TOKEN_FAULTS.includes(value));
    if (!ok) throw new Error(`bad fault ${JSON.stringify(name)}: ${JSON.stringify(value)}`);
    next[name] = value;
  }
  return next;
}

const admin = http.createServer(async (request, response) => {
  const answer = (status, body) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  if (request.url !== "/faults") return answer(404, { error: "only /faults is here" });
  if (request.method === "GET") return answer(200, faults);
  if (request.method !== "POST") return answer(405, { error: "GET or POST /faults" });
  let text = "";
  for await (const chunk of request) text += chunk;
  try {
    const next = checkedFaults(JSON.parse(text || "{}"));
    await setDown(next.down);
    faults = next;
    console.error(`faults: ${JSON.stringify(faults)}`);
    return answer(200, faults);
  } catch (error) {
    return answer(400, { error: error.message });
  }
});
const adminPort = await listen(admin, 0);

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.closeAllConnections();
    admin.closeAllConnections();
    process.exit(0);
  });
}

process.stdout.write(`oidc-provider ready at ${issuer} admin http://127.0.0.1:${adminPort}\n`);
