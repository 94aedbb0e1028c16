import type { Redis } from "ioredis";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { storedState } from "../../src/campaigns/state.js";
import type { Config } from "../../src/config.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { ARTIFACTS, launchBrowser } from "../helpers/browser.js";
import { type CliChild, finished, runCli, spawnCli } from "../helpers/cli.js";
import { dashboardLedger } from "../helpers/dashboard-ledger.js";
import { csrfOf, FORM, send } from "../helpers/http-send.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";
import { eventually } from "../helpers/wait-for.js";

const CAMPAIGN = "held-one";
const TOKEN = "dash-token-4c1f9a7e2b3d";
const REBIND = "rebind.attacker.example";
const PUBLIC = "dash.example.test";

describe("giftjobs dashboard: Host, Origin and token guards", () => {
  let redis: Redis;
  let config: Config;
  let ledger: Ledger;
  let dashboard: RunningDashboard | undefined;

  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    await redis?.quit();
  });
  beforeEach(async () => {
    ({ config, ledger } = dashboardLedger(redis, "dashg"));
    await ledger.campaigns.register(CAMPAIGN, { execution_mode: "sync", state: "held" });
    await ledger.orders.record(CAMPAIGN, oneRowOrders(CAMPAIGN, ["a"]));
  });
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
  });

  const state = async () => storedState(await ledger.campaigns.meta(CAMPAIGN));

  /** The dashboard's address through loopback, whatever it is bound to. */
  const base = () => `http://127.0.0.1:${new URL(dashboard!.url).port}/`;
  const port = () => new URL(dashboard!.url).port;
  const pagePath = `campaigns/${CAMPAIGN}`;
  const approvePath = `campaigns/${CAMPAIGN}/actions/approve`;

  /** Approve, confirmed, with the CSRF token of a page read the proper way. */
  const approve = (csrf: string, headers: Record<string, string>) =>
    send(`${base()}${approvePath}`, {
      method: "POST",
      headers: { ...FORM, ...headers },
      body: `csrf=${encodeURIComponent(csrf)}&confirmed=yes`,
    });

  it("on a loopback bind, a rebinding Host gets 421 before any page or token, and its POST changes nothing", async () => {
    dashboard = await startDashboard({ config, port: 0, allowActions: true });
    const rebound = await send(`${base()}${pagePath}`, {
      headers: { host: `${REBIND}:${port()}` },
    });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain("csrf");

    const csrf = csrfOf((await send(`${base()}${pagePath}`)).body)!;
    expect(csrf).toBeDefined();
    expect((await approve(csrf, { host: `${REBIND}:${port()}` })).status).toBe(421);
    expect(await state()).toBe("held");
  });

  it("on 0.0.0.0, answers loopback names and --public-host names only; a rebinding Host gets 421 and changes nothing", async () => {
    dashboard = await startDashboard({
      config,
      port: 0,
      host: "0.0.0.0",
      publicHosts: [PUBLIC],
      allowActions: true,
      actionToken: TOKEN,
    });
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const get = (host: string) => send(`${base()}${pagePath}`, { headers: { host, ...bearer } });
    for (const host of [`${PUBLIC}:${port()}`, "DASH.example.test.", `localhost:${port()}`])
      expect((await get(host)).status, host).toBe(200);
    // The address bound is no name: 0.0.0.0 is not taken as a Host either.
    for (const host of [`${REBIND}:${port()}`, `0.0.0.0:${port()}`, `${PUBLIC}.${REBIND}`]) {
      const reply = await get(host);
      expect(reply.status, host).toBe(421);
      expect(reply.body).not.toContain("csrf");
    }
    // Even with the token and a CSRF token read the proper way.
    const csrf = csrfOf((await get(PUBLIC)).body)!;
    expect((await approve(csrf, { host: REBIND, ...bearer })).status).toBe(421);
    expect((await send(`${base()}login`, { headers: { host: REBIND } })).status).toBe(421);
    expect(await state()).toBe("held");
  });

  it("a POST or PUT with a foreign Origin is refused and changes nothing", async () => {
    dashboard = await startDashboard({ config, port: 0, allowActions: true });
    const csrf = csrfOf((await send(`${base()}${pagePath}`)).body)!;
    for (const origin of [`http://${REBIND}:${port()}`, "null", "http://evil.example"]) {
      const reply = await approve(csrf, { origin });
      expect(reply.status, origin).toBe(403);
      expect(reply.body).toBe("giftjobs dashboard: request from another site\n");
    }
    const clean = await send(`${base()}queues/api/queues/orders/clean/completed`, {
      method: "PUT",
      headers: { origin: "http://evil.example" },
    });
    expect(clean.status).toBe(403);
    expect(await state()).toBe("held");

    // The dashboard's own page posts with its own Origin.
    const own = await approve(csrf, { origin: `http://127.0.0.1:${port()}` });
    expect(own.status).toBe(200);
    expect(own.body).toContain(`campaign ${CAMPAIGN} approved`);
    expect(await state()).toBe("running");
  });

  it("off loopback, actions need the token: as a Bearer header, or through the login form's cookie", async () => {
    dashboard = await startDashboard({
      config,
      port: 0,
      host: "0.0.0.0",
      allowActions: true,
      actionToken: TOKEN,
    });
    // Without the token: a page without buttons or CSRF token, and a link to log in.
    const anonymous = await send(`${base()}${pagePath}`);
    expect(anonymous.status).toBe(200);
    expect(csrfOf(anonymous.body)).toBeUndefined();
    expect(anonymous.body).toContain('<a href="/login">Log in</a> to use the actions.');

    const csrf = csrfOf(
      (await send(`${base()}${pagePath}`, { headers: { authorization: `Bearer ${TOKEN}` } })).body,
    )!;
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token-0000000000" },
      { authorization: `Basic ${TOKEN}` },
      { cookie: `giftjobs_dashboard=${TOKEN}` },
    ];
    for (const headers of attempts) {
      const refused = await approve(csrf, headers);
      expect(refused.status, JSON.stringify(headers)).toBe(401);
    }
    const put = (headers: Record<string, string>) =>
      send(`${base()}queues/api/queues/orders/clean/completed`, { method: "PUT", headers });
    expect((await put({})).status).toBe(401);
    expect(await state()).toBe("held");

    // The login form: a wrong token is refused; the right one sets the cookie.
    const login = (token: string) =>
      send(`${base()}login`, {
        method: "POST",
        headers: FORM,
        body: `token=${encodeURIComponent(token)}`,
      });
    expect((await send(`${base()}login`)).body).toContain('<form method="post" action="/login">');
    const wrong = await login("not-the-token-at-all");
    expect(wrong.status).toBe(401);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    const right = await login(TOKEN);
    expect(right.status).toBe(303);
    expect(right.headers.location).toBe("/campaigns");
    const cookie = right.headers["set-cookie"]![0]!;
    expect(cookie).toMatch(
      /^giftjobs_dashboard=[\w-]+\.[0-9a-z]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    expect(cookie).not.toContain(TOKEN);
    const session = { cookie: cookie.split(";")[0]! };
    expect((await put(session)).status).toBeLessThan(300);

    const approved = await approve(csrf, session);
    expect(approved.status).toBe(200);
    expect(await state()).toBe("running");
    const paused = await send(`${base()}campaigns/${CAMPAIGN}/actions/pause`, {
      method: "POST",
      headers: { ...FORM, authorization: `Bearer ${TOKEN}` },
      body: `csrf=${encodeURIComponent(csrf)}&confirmed=yes`,
    });
    expect(paused.status).toBe(200);
    expect(await state()).toBe("paused");
  });

  it("off loopback, a browser logs in with the form and then approves from the page", async () => {
    dashboard = await startDashboard({
      config,
      port: 0,
      host: "0.0.0.0",
      allowActions: true,
      actionToken: TOKEN,
    });
    const browser: Browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      page.on("dialog", (dialog) => void dialog.accept());
      await page.goto(`${base()}${pagePath}`);
      expect(await page.locator(".actions button").count()).toBe(0);
      await page.getByRole("link", { name: "Log in" }).click();
      await page.getByLabel("Token").fill(TOKEN);
      await Promise.all([
        page.waitForURL(`${base()}campaigns`),
        page.getByRole("button", { name: "Log in" }).click(),
      ]);
      // The cookie is the browser's only: no script of the page can read it.
      expect(await page.evaluate("document.cookie")).toBe("");
      await page.goto(`${base()}${pagePath}`);
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByRole("status").waitFor();
      expect(await page.getByRole("status").textContent()).toBe(`campaign ${CAMPAIGN} approved`);
      await page.screenshot({ path: `${ARTIFACTS}dashboard-token-approved.png`, fullPage: true });
    } finally {
      await browser.close();
    }
    expect(await state()).toBe("running");
  });

  it("refuses to start, in one line naming the setting, without the token where actions need one", async () => {
    const start = (options: Partial<Parameters<typeof startDashboard>[0]>) =>
      startDashboard({ config, port: 0, allowActions: true, ...options });
    const missing =
      /^GIFTJOBS_DASHBOARD_TOKEN: is not set: --allow-actions on a dashboard reached from other machines/;
    await expect(start({ host: "0.0.0.0" })).rejects.toThrow(missing);
    await expect(start({ publicHosts: [PUBLIC] })).rejects.toThrow(missing);
    await expect(start({ host: "0.0.0.0", actionToken: "short" })).rejects.toThrow(
      /^GIFTJOBS_DASHBOARD_TOKEN: must be at least 16 characters/,
    );
    await expect(start({ publicHosts: ["https://dash.example.test:8443"] })).rejects.toThrow(
      /^--public-host must be a host name or IP address, without scheme, port or path/,
    );
    // Read-only, nothing needs the token.
    dashboard = await startDashboard({ config, port: 0, host: "0.0.0.0" });
    expect((await send(`${base()}campaigns`)).status).toBe(200);
  });
});

describe("giftjobs dashboard (command): --public-host and GIFTJOBS_DASHBOARD_TOKEN", () => {
  let child: CliChild | undefined;
  afterEach(() => {
    if (child?.exitCode === null) child.kill("SIGKILL");
  });

  const env = () => ({ GIFTJOBS_PREFIX: uniquePrefix("dashgcli"), GIFTJOBS_REDIS_URL: REDIS_URL });

  it("refuses --host 0.0.0.0 --allow-actions without GIFTJOBS_DASHBOARD_TOKEN, in one line", async () => {
    const run = await runCli(["dashboard", "--port", "0", "--host", "0.0.0.0", "--allow-actions"], {
      ...env(),
      GIFTJOBS_DASHBOARD_TOKEN: "",
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^giftjobs: error: GIFTJOBS_DASHBOARD_TOKEN: is not set: [^\n]+\n$/);
  });

  it("answers the --public-host names and refuses others", async () => {
    child = spawnCli(
      [
        "dashboard",
        "--port",
        "0",
        "--host",
        "0.0.0.0",
        "--allow-actions",
        "--public-host",
        PUBLIC,
        "--public-host",
        "10.1.2.3",
      ],
      { ...env(), GIFTJOBS_DASHBOARD_TOKEN: TOKEN },
    );
    const proc = child;
    const done = finished(proc);
    await eventually(
      async () => proc.printed().stdout.includes("\n") || proc.exitCode !== null,
      "the dashboard's first line",
    );
    const port = /:(\d+)\/$/m.exec(proc.printed().stdout)?.[1];
    expect(port, proc.output()).toBeDefined();
    const get = (host: string) => send(`http://127.0.0.1:${port}/campaigns`, { headers: { host } });
    expect((await get(PUBLIC)).status).toBe(200);
    expect((await get(`10.1.2.3:${port}`)).status).toBe(200);
    expect((await get(REBIND)).status).toBe(421);
    proc.kill("SIGTERM");
    expect((await done).code).toBe(0);
    expect(proc.output()).not.toContain(TOKEN);
  });
});
