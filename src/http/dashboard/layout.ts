import type { FastifyReply, FastifyRequest } from "fastify";
import type { OrganizationKind } from "../../domain/caller.js";
import { assetPath } from "./assets.js";
import { type Html, html } from "./html.js";
import type { DashboardRequestState, PageContent } from "./page.js";

const KIND_LABELS: Record<OrganizationKind, string> = {
  market_maker: "Market maker",
  project: "Token project",
  operator: "Operator",
};

/** The whole document around a page's content; `signedIn` adds navigation and sign-out. */
export function documentOf(content: { title: string; body: Html }, signedIn?: SignedIn): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${content.title} · trading-reports</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetPath("dashboard.css")}">
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<a class="brand" href="/app">trading-reports</a>
${signedIn === undefined ? "" : header(signedIn)}
</header>
<main id="main" tabindex="-1">
<h1>${content.title}</h1>
${content.body}
</main>
</body>
</html>
`;
}

type SignedIn = DashboardRequestState & { current: string; section?: string };

function header(s: SignedIn): Html {
  const mark = (path: string) =>
    path === s.current
      ? html` aria-current="page"`
      : path === s.section
        ? html` aria-current="true"`
        : "";
  const links = s.nav
    .filter((entry) => entry.kinds.includes(s.caller.kind))
    .map((entry) => html`<li><a href="${entry.path}"${mark(entry.path)}>${entry.label}</a></li>`);
  return html`<nav aria-label="Dashboard"><ul>${links}</ul></nav>
<div class="who">
<span><span class="org">${s.organizationName}</span> <span class="kind">${KIND_LABELS[s.caller.kind]}</span></span>
<form method="post" action="/app/sign-out">
<input type="hidden" name="csrf" value="${s.csrfToken}">
<button type="submit">Sign out</button>
</form>
</div>`;
}

/** Sends a signed-in page: the layout with the caller's navigation around `content`. */
export function sendPage(
  request: FastifyRequest,
  reply: FastifyReply,
  content: PageContent,
): FastifyReply {
  const current = content.current ?? request.url.split("?")[0] ?? "";
  return sendHtml(
    reply.code(content.status ?? 200),
    documentOf(content, { ...request.dashboard, current, section: content.section }),
  );
}

export function sendHtml(reply: FastifyReply, document: Html): FastifyReply {
  return reply.type("text/html; charset=utf-8").send(document.text);
}
