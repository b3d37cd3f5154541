import type { FastifyInstance, FastifyReply } from "fastify";
import { hashApiKey, keyFromAuthorization } from "../../domain/api-key.js";
import { AuthenticationError } from "../../domain/errors.js";
import type { Services } from "../../services/index.js";
import { addressBucket } from "../abuse/client-address.js";
import { type AuthFailureBudget, setRetryAfter } from "../abuse/rate-limits.js";
import { type Html, html } from "./html.js";
import { documentOf, sendHtml, sendPage } from "./layout.js";
import type { NavEntry } from "./page.js";
import {
  type CookiePolicy,
  clearSessionCookie,
  foreignOrigin,
  setSessionCookie,
} from "./session.js";

const MAX_KEY_LENGTH = 512;

function signInPage(error?: string): Html {
  const body = html`<p>Sign in with your organization's API key. It is sent once to open a session and is not kept by your browser.</p>
${error === undefined ? "" : html`<p class="error" role="alert" id="sign-in-error">${error}</p>`}
<form method="post" action="/app/sign-in" class="sign-in">
<label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" required maxlength="${MAX_KEY_LENGTH}"${error === undefined ? "" : html` aria-describedby="sign-in-error" aria-invalid="true"`}>
<button type="submit">Sign in</button>
</form>`;
  return documentOf({ title: "Sign in", body });
}

/**
 * `GET /app` (the sign-in form, or the caller's first page when signed in),
 * `POST /app/sign-in` (and `GET /app/sign-in`, back to `/app`). Failed sign-ins count against the address's budget of failed
 * authentications, as on the API.
 */
export function signInRoutes(
  app: FastifyInstance,
  deps: {
    services: Services;
    policy: CookiePolicy;
    nav: readonly NavEntry[];
    /** The address's failed authentications, one budget with the API's. */
    failures: AuthFailureBudget;
  },
): void {
  const { failures } = deps;
  app.get("/", { schema: { hide: true } }, async (request, reply) => {
    const token = request.cookies[deps.policy.name];
    const session =
      token === undefined ? undefined : await deps.services.dashboardSessions.resume(token);
    if (session === undefined) {
      if (token !== undefined) clearSessionCookie(reply, deps.policy);
      return sendHtml(reply, signInPage());
    }
    const home = deps.nav.find((entry) => entry.kinds.includes(session.caller.kind));
    if (home !== undefined) return reply.redirect(home.path, 303);
    request.dashboard = { ...session, nav: deps.nav };
    return sendPage(request, reply, { title: "Dashboard", body: html`<p>No pages yet.</p>` });
  });

  // After a failed sign-in the address bar shows /app/sign-in: reloading it, or coming back
  // to it, leads to the form (or, signed in, to the first page).
  app.get("/sign-in", { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect("/app", 303),
  );

  app.post("/sign-in", { schema: { hide: true } }, async (request, reply) => {
    if (foreignOrigin(request, deps.policy))
      return sendHtml(reply.code(403), signInPage("Sign in from this site's own page."));
    const body = request.body as Record<string, unknown> | undefined;
    const key = typeof body?.key === "string" ? body.key.trim() : "";
    if (key === "") return sendHtml(reply.code(400), signInPage("Enter an API key."));
    if (key.length > MAX_KEY_LENGTH) {
      const tooLong = `That is not an API key: a key is at most ${MAX_KEY_LENGTH} characters.`;
      return sendHtml(reply.code(400), signInPage(tooLong));
    }
    try {
      // A key that authenticated before is signed in whatever its address's failures. The
      // authenticator reads "Bearer <key>" too: the key itself is what is known, not the text.
      const known = hashApiKey(keyFromAuthorization(key) ?? key);
      const attempt = await failures.attempt(addressBucket(request.ip), known, () =>
        deps.services.dashboardSessions.signIn(key),
      );
      if ("blockedForMs" in attempt) return tooManySignIns(reply, attempt.blockedForMs);
      // A sign-in over a session (another key, or the same) ends it: its cookie is replaced.
      const previous = request.cookies[deps.policy.name];
      if (previous !== undefined) await deps.services.dashboardSessions.signOut(previous);
      setSessionCookie(reply, deps.policy, attempt.value.token);
      return reply.redirect("/app", 303);
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      return sendHtml(reply.code(401), signInPage(error.message));
    }
  });
}

/** The page says the wait that Retry-After says (the seconds until a failure leaves the window). */
function tooManySignIns(reply: FastifyReply, blockedForMs: number) {
  const seconds = setRetryAfter(reply, blockedForMs);
  const wait = seconds === 1 ? "1 second" : `${seconds} seconds`;
  return sendHtml(
    reply.code(429),
    signInPage(`Too many failed sign-ins from your address; retry in ${wait}.`),
  );
}
