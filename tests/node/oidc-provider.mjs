// An OpenID provider for the single sign-on tests (tests/browser/test_sso_browser.py): the oidc-provider package
// with its development sign-in form (any password), one confidential client, and accounts read from a JSON file at
// every look-up, {"alice": {"groups": ["mcp-operators"]}}, so that a test changes a person's groups by rewriting it.
//
// Configured by the environment: PORT, ACCOUNTS (the file), CLIENT_ID, CLIENT_SECRET, REDIRECT_URI. It signs ID
// tokens with ES256 (an RSA key is in its key set too) and requires PKCE; groups come from the userinfo endpoint
// with the `profile` scope, as the ID token of a code flow carries only what identifies the person.
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";

import Provider from "oidc-provider";

const { PORT, ACCOUNTS, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI } = process.env;

const signingKey = (type, options, kid, alg) => ({
  ...generateKeyPairSync(type, options).privateKey.export({ format: "jwk" }),
  kid,
  alg,
  use: "sig",
});

const accounts = () => JSON.parse(readFileSync(ACCOUNTS, "utf8"));

const provider = new Provider(`http://127.0.0.1:${PORT}`, {
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [REDIRECT_URI],
      id_token_signed_response_alg: "ES256",
    },
  ],
  jwks: {
    keys: [
      signingKey("ec", { namedCurve: "P-256" }, "test-es256", "ES256"),
      signingKey("rsa", { modulusLength: 2048 }, "test-rs256", "RS256"),
    ],
  },
  claims: { openid: ["sub"], email: ["email"], profile: ["preferred_username", "groups"] },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, sub) {
    const account = accounts()[sub];
    if (!account) return undefined;
    return {
      accountId: sub,
      async claims() {
        return { sub, preferred_username: sub, email: `${sub}@example.test`, groups: account.groups };
      },
    };
  },
  // The console is this provider's own client: no consent page, as with a company's identity provider.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope("openid email profile");
    await grant.save();
    return grant;
  },
});

provider.listen(Number(PORT), "127.0.0.1");
