import { expect } from "vitest";
import type { TestApp } from "./app.js";

export type InjectedSession = {
  /** `Cookie` header value carrying the session. */
  cookie: string;
  /** The session's CSRF token, read from a page's sign-out form. */
  csrf: string;
  /** GET `url` as this session (no redirect followed). */
  get(url: string): ReturnType<TestApp["request"]>;
  /** POST a form to `url` as this session (the CSRF token added unless `csrf: null`). */
  post(
    url: string,
    form?: Record<string, string>,
    csrf?: string | null,
  ): ReturnType<TestApp["request"]>;
};

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** Signs in with `key` through the form (in process, no browser) and returns the session. */
export async function injectSignIn(t: TestApp, key: string): Promise<InjectedSession> {
  const signIn = await t.request({
    method: "POST",
    url: "/app/sign-in",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: form({ key }),
  });
  expect(signIn.statusCode, signIn.body).toBe(303);
  const setCookie = String(signIn.headers["set-cookie"]);
  const cookie = setCookie.split(";")[0] ?? "";
  const home = await t.request({ url: "/app", headers: { cookie } });
  const landing =
    home.statusCode === 303
      ? await t.request({ url: String(home.headers.location), headers: { cookie } })
      : home;
  const csrf = /name="csrf" value="([^"]+)"/.exec(landing.body)?.[1] ?? "";
  expect(csrf).not.toBe("");
  return {
    cookie,
    csrf,
    get: (url) => t.request({ url, headers: { cookie } }),
    post: (url, fields = {}, token: string | null = csrf) =>
      t.request({
        method: "POST",
        url,
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        payload: form(token === null ? fields : { ...fields, csrf: token }),
      }),
  };
}
