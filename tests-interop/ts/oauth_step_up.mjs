// The official TypeScript SDK's client following mcpkit's per-tool step-up challenge: it logs
// in through the SDK's OAuth flow (discovery from the 401, dynamic registration, authorization
// code + PKCE against mcpkit's test authorization server, answered headlessly), lists tools
// (the one needing a scope it lacks is not listed), calls that tool anyway, gets 403
// `insufficient_scope` with the scope named, authorizes again for it, and calls it again.
//
//   node tests-interop/ts/oauth_step_up.mjs URL TOOL
//
// Prints one JSON line: {"before": [tool names], "result": text, "after": [tool names],
// "authorizations": n}. The provider keeps no refresh token, so a new scope is a new
// authorization (with one, the SDK refreshes and retries with the same scope).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [url, tool] = process.argv.slice(2);
const redirect = 'http://127.0.0.1:9/callback';
const kept = {};
let code;
let authorizations = 0;

const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return {
      redirect_uris: [redirect],
      client_name: 'ts-step-up',
      application_type: 'native',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  },
  state() { return 'state-1'; },
  clientInformation() { return kept.client; },
  saveClientInformation(info) { kept.client = info; },
  tokens() { return kept.tokens && { ...kept.tokens, refresh_token: undefined }; },
  saveTokens(tokens) { kept.tokens = tokens; },
  saveCodeVerifier(v) { kept.verifier = v; },
  codeVerifier() { return kept.verifier; },
  // The "browser": follow the authorization URL without a person; the test server approves.
  async redirectToAuthorization(authorizationUrl) {
    authorizations += 1;
    const r = await fetch(authorizationUrl, { redirect: 'manual' });
    code = new URL(r.headers.get('location')).searchParams.get('code');
  },
};

/** Run `step` until it stops asking for authorization, finishing each authorization on `transport()`. */
async function authorized(transport, step) {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await step();
    } catch (e) {
      if (!(e instanceof UnauthorizedError) || !code) throw e;
      const c = code;
      code = undefined;
      await transport().finishAuth(c);
    }
  }
  throw new Error('still unauthorized after 5 authorizations');
}

let transport;
const client = new Client({ name: 'ts-step-up', version: '0.0.0' });
await authorized(() => transport, async () => {
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
});
const names = async () => (await client.listTools()).tools.map((t) => t.name);
const before = await names();
const called = await authorized(() => transport, () => client.callTool({ name: tool, arguments: {} }));
const after = await names();
console.log(JSON.stringify({ before, result: called.content[0].text, after, authorizations }));
await client.close();
