import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { storedState } from "../../src/campaigns/state.js";
import type { Config } from "../../src/config.js";
import { SessionCookies } from "../../src/dashboard/session-cookie.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import { addUser, parseRoles, parseUsers } from "../../src/dashboard/users-file.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { createLogger } from "../../src/log.js";
import { runCli } from "../helpers/cli.js";
import { dashboardLedger } from "../helpers/dashboard-ledger.js";
import { csrfOf, FORM, send } from "../helpers/http-send.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("giftjobs dashboard --users: named users and their roles", () => {
  let redis: Redis;
  let config: Config;
  let ledger: Ledger;
  let dir: string;
  let usersFile: string;
  let tokens: { viewer: string; operator: string; approver: string };
  let logged: string;
  let dashboard: RunningDashboard | undefined;

  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    await redis?.quit();
  });
  beforeEach(async () => {
    ({ config, ledger } = dashboardLedger(redis, "dashu"));
    await ledger.campaigns.register("held-one", { execution_mode: "sync", state: "held" });
    await ledger.orders.record("held-one", oneRowOrders("held-one", ["a"]));
    await ledger.campaigns.register("running-one", { execution_mode: "sync" });
    await ledger.orders.record("running-one", oneRowOrders("running-one", ["b"]));
    dir = await tmpDir("dashu");
    usersFile = join(dir, "users");
    tokens = {
      viewer: (await addUser(usersFile, "Vera View", parseRoles("view", "--roles"))).token,
      operator: (await addUser(usersFile, "otto", parseRoles("operate", "--roles"))).token,
      approver: (await addUser(usersFile, "Ana Lima", parseRoles("approve", "--roles"))).token,
    };
    logged = "";
  });
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
  });

  const start = async (options: Partial<Parameters<typeof startDashboard>[0]> = {}) => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    dashboard = await startDashboard({
      config,
      port: 0,
      allowActions: true,
      usersFile,
      log: createLogger({ level: "debug", destination, pretty: false }),
      ...options,
    });
  };
  const base = () => dashboard!.url;
  const state = async (campaign: string) => storedState(await ledger.campaigns.meta(campaign));
  const login = (token: string) =>
    send(`${base()}login`, {
      method: "POST",
      headers: FORM,
      body: `token=${encodeURIComponent(token)}`,
    });
  /** Runs an action, confirmed, with the CSRF token of the page that user reads. */
  const act = async (campaign: string, action: string, headers: Record<string, string>) => {
    const page = await send(`${base()}campaigns/${campaign}`, { headers });
    const csrf = csrfOf(page.body) ?? "none";
    return send(`${base()}campaigns/${campaign}/actions/${action}`, {
      method: "POST",
      headers: { ...FORM, ...headers },
      body: `csrf=${encodeURIComponent(csrf)}&confirmed=yes`,
    });
  };

  it("every page needs a signed-in user; the login sets a cookie naming them, the header shows them and logs out", async () => {
    await start();
    const anonymous = await send(`${base()}campaigns`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.location).toBe("/login");
    for (const path of ["campaigns.json", "queues/api/queues", "campaigns/held-one/report.csv"])
      expect((await send(`${base()}${path}`)).status, path).toBeGreaterThanOrEqual(300);
    expect((await send(`${base()}campaigns.json`)).status).toBe(401);

    const form = await send(`${base()}login`);
    expect(form.status).toBe(200);
    expect(form.body).toContain("giftjobs dashboard add-user");

    const right = await login(tokens.operator);
    expect(right.status).toBe(303);
    const cookie = right.headers["set-cookie"]![0]!;
    expect(cookie).toMatch(
      /^giftjobs_dashboard=[\w-]+\.[0-9a-z]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    expect(cookie).not.toContain(tokens.operator);
    const session = { cookie: cookie.split(";")[0]! };
    const page = await send(`${base()}campaigns`, { headers: session });
    expect(page.status).toBe(200);
    expect(page.body).toContain('signed in as <strong class="user">otto</strong>');
    expect(page.body).toContain('<form method="post" action="/logout"');
    const json = await send(`${base()}campaigns.json`, { headers: bearer(tokens.viewer) });
    expect(json.status).toBe(200);

    const out = await send(`${base()}logout`, { method: "POST", headers: session });
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe("/login");
    expect(out.headers["set-cookie"]![0]).toMatch(/^giftjobs_dashboard=; .*Max-Age=0/);
    expect(logged).toContain('"user":"otto"');
  });

  it("the report, every e-mail address, needs the operate role: a view user gets 403 and no link", async () => {
    await start();
    const report = `${base()}campaigns/running-one/report.csv`;
    const viewed = await send(report, { headers: bearer(tokens.viewer) });
    expect(viewed.status).toBe(403);
    expect(viewed.body).toContain("Vera View may not download the report");
    expect(viewed.body).not.toMatch(/@example\.com/);
    const page = await send(`${base()}campaigns/running-one`, { headers: bearer(tokens.viewer) });
    expect(page.body).not.toContain("report.csv");
    expect(page.body).toContain("needs the operate role");
    const operated = await send(report, { headers: bearer(tokens.operator) });
    expect(operated.status).toBe(200);
    expect(operated.headers["content-type"]).toContain("text/csv");
  });

  it("a view user reads but cannot pause (403 naming the role); an operate user pauses; only an approve user approves", async () => {
    await start();
    const viewer = bearer(tokens.viewer);
    const viewPage = await send(`${base()}campaigns/running-one`, { headers: viewer });
    expect(viewPage.status).toBe(200);
    expect(viewPage.body).not.toContain(">Pause</button>");
    expect(viewPage.body).toContain("your roles do not allow it (it needs operate)");

    const refused = await act("running-one", "pause", viewer);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("Vera View may not pause: that needs the operate role");
    expect(await state("running-one")).toBe("running");
    // bull-board's changes need operate too.
    const clean = (headers: Record<string, string>) =>
      send(`${base()}queues/api/queues/orders/clean/completed`, { method: "PUT", headers });
    expect((await clean(viewer)).status).toBe(403);
    expect((await clean(bearer(tokens.operator))).status).toBeLessThan(300);

    const operator = bearer(tokens.operator);
    const paused = await act("running-one", "pause", operator);
    expect(paused.status).toBe(200);
    expect(paused.body).toContain("campaign running-one paused");
    expect(await state("running-one")).toBe("paused");

    // A held campaign of the four-eyes rule says who may approve it.
    await ledger.campaigns.setMeta("held-one", {
      four_eyes: "USD 561.60 over 500.00",
      imported_by: JSON.stringify(["alice"]),
    });
    const heldPage = await send(`${base()}campaigns/held-one`, { headers: operator });
    expect(heldPage.body).toContain(
      "a user of the users file with the approve role may approve it, not alice (who imported it)",
    );
    const notApproved = await act("held-one", "approve", operator);
    expect(notApproved.status).toBe(403);
    expect(notApproved.body).toContain("otto may not approve: that needs the approve role");
    expect(await state("held-one")).toBe("held");

    // The approver signs in with the form, as a browser does.
    const cookie = (await login(tokens.approver)).headers["set-cookie"]![0]!.split(";")[0]!;
    const approved = await act("held-one", "approve", { cookie });
    expect(approved.status).toBe(200);
    expect(approved.body).toContain("campaign held-one approved");
    expect(await state("held-one")).toBe("running");
    // The log names who acted and from where.
    const line = logged.split("\n").find((l) => l.includes('"action":"approve"'))!;
    expect(JSON.parse(line)).toMatchObject({ user: "Ana Lima", from: "127.0.0.1" });
  });

  it("a bad token, a forged cookie and a token in a URL are refused; no token shows in the file, the logs or a page", async () => {
    await start();
    const [, id] = tokens.operator.split(".");
    const wrong = [
      "",
      "not-a-token-at-all-0000",
      `gjd.${id}.${"A".repeat(43)}`, // the right id, the wrong secret
      `gjd.000000000000.${tokens.operator.split(".")[2]}`, // the right secret, no such id
      `${tokens.operator}x`,
    ];
    for (const token of wrong) {
      expect((await login(token)).status, token).toBe(401);
      expect((await act("running-one", "pause", bearer(token))).status, token).toBe(401);
    }
    // A cookie signed by another key (another dashboard, a guess) names nobody.
    const forged = new SessionCookies(Buffer.alloc(32, 7)).setCookie("otto").split(";")[0]!;
    expect((await send(`${base()}campaigns`, { headers: { cookie: forged } })).status).toBe(303);
    expect((await act("running-one", "pause", { cookie: forged })).status).toBe(401);
    expect(await state("running-one")).toBe("running");

    const inUrl = await send(`${base()}campaigns?token=${encodeURIComponent(tokens.operator)}`, {
      headers: bearer(tokens.operator),
    });
    expect(inUrl.status).toBe(400);
    expect(inUrl.body).toContain("a token never goes in a URL");
    expect((await send(`${base()}login?access_token=x`)).status).toBe(400);

    const page = await send(`${base()}campaigns/running-one`, {
      headers: bearer(tokens.operator),
    });
    const file = await readFile(usersFile, "utf8");
    expect((await stat(usersFile)).mode & 0o777).toBe(0o600);
    for (const token of Object.values(tokens)) {
      expect(file).not.toContain(token.split(".")[2]);
      expect(logged).not.toContain(token.split(".")[2]);
      expect(page.body).not.toContain(token.split(".")[2]);
    }
    expect(logged).toContain("login refused (wrong token)");
  });

  it("a bad users file stops the start in one line naming its line, before Redis", async () => {
    const bad = async (text: string) => {
      await writeFile(usersFile, text);
      return startDashboard({ config, port: 0, usersFile }).then(
        () => "started",
        (error: Error) => error.message,
      );
    };
    const good = (await readFile(usersFile, "utf8")).split("\n").filter((l) => /^\w/.test(l));
    const [name, roles, id, hash] = good[0]!.split(":");
    expect(await bad(`# users\n\n${name}:${roles}:${id}\n`)).toBe(
      `${usersFile} line 3: expected NAME:ROLES:ID:HASH (4 fields separated by colons), found 3`,
    );
    expect(await bad(`${name}:admin:${id}:${hash}\n`)).toBe(
      `${usersFile} line 1: unknown role "admin": the roles are view, operate, approve`,
    );
    expect(await bad(`${name}::${id}:${hash}\n`)).toBe(
      `${usersFile} line 1: no role: give one or more of view, operate, approve`,
    );
    expect(await bad(`${name}:view:${id}:${tokens.viewer}\n`)).toMatch(
      new RegExp(`^${usersFile} line 1: the hash is not scrypt\\$N\\$r\\$p\\$SALT\\$KEY`),
    );
    expect(await bad(`${good[0]}\n${good[0]}\n`)).toBe(
      `${usersFile} line 2: user "Vera View" is already on line 1`,
    );
    expect(await bad(`${good[0]}\nVera:view:${id}:${hash}\n`)).toBe(
      `${usersFile} line 2: token id ${id} is already on line 1`,
    );
    expect(await bad(`dashboard:view:${id}:${hash}\n`)).toBe(
      `${usersFile} line 1: the name dashboard is the shared token's: choose another`,
    );
    expect(await bad("# nobody yet\n")).toMatch(new RegExp(`^${usersFile}: no user in it`));
    await expect(
      startDashboard({ config, port: 0, usersFile: join(dir, "missing") }),
    ).rejects.toThrow(/^--users .*missing: no such file$/);
    // Both the shared token and the users file: one of them must go.
    await writeFile(usersFile, `${good.join("\n")}\n`);
    await expect(
      startDashboard({ config, port: 0, usersFile, actionToken: "shared-token-0123456789" }),
    ).rejects.toThrow(/^GIFTJOBS_DASHBOARD_TOKEN: is set, and so is --users/);
    expect(parseUsers(`${good.join("\n")}\n`, "f").map((u) => u.name)).toEqual([
      "Vera View",
      "otto",
      "Ana Lima",
    ]);
  });

  it("without a users file the shared token still works, as the user dashboard with every role", async () => {
    const shared = "shared-token-0123456789";
    await start({ usersFile: undefined, actionToken: shared });
    const base0 = base();
    // Reading stays open.
    expect((await send(`${base0}campaigns`)).status).toBe(200);
    const cookie = (
      await send(`${base0}login`, { method: "POST", headers: FORM, body: `token=${shared}` })
    ).headers["set-cookie"]![0]!.split(";")[0]!;
    const page = await send(`${base0}campaigns/held-one`, { headers: { cookie } });
    expect(page.body).toContain('signed in as <strong class="user">dashboard</strong>');
    const csrf = csrfOf(page.body)!;
    const approved = await send(`${base0}campaigns/held-one/actions/approve`, {
      method: "POST",
      headers: { ...FORM, cookie },
      body: `csrf=${encodeURIComponent(csrf)}&confirmed=yes`,
    });
    expect(approved.status).toBe(200);
    expect(await state("held-one")).toBe("running");
    // A named user's token means nothing to it.
    expect((await act("running-one", "pause", bearer(tokens.operator))).status).toBe(401);
  });
});

describe("session cookies", () => {
  it("name their user, and are refused once changed or older than 12 hours", () => {
    let now = Date.parse("2026-03-01T08:00:00Z");
    const cookies = new SessionCookies(Buffer.alloc(32, 1), () => now);
    const value = cookies.setCookie("Ana Lima").split(";")[0]!;
    const req = (cookie: string) => ({ headers: { cookie } }) as never;
    expect(cookies.nameOf(req(value))).toBe("Ana Lima");
    const [, body, issued, mac] = /^giftjobs_dashboard=([^.]+)\.([^.]+)\.(.+)$/.exec(value)!;
    const other = Buffer.from("otto").toString("base64url");
    expect(cookies.nameOf(req(`giftjobs_dashboard=${other}.${issued}.${mac}`))).toBeUndefined();
    expect(cookies.nameOf(req(`giftjobs_dashboard=${body}.${issued}.${mac}x`))).toBeUndefined();
    now += 12 * 3_600_000 - 1000;
    expect(cookies.nameOf(req(value))).toBe("Ana Lima");
    now += 2000;
    expect(cookies.nameOf(req(value))).toBeUndefined();
  });
});

describe("giftjobs dashboard add-user (command)", () => {
  it("adds a line with the hash, prints the token once, and refuses a name twice or a bad role", async () => {
    const file = join(await tmpDir("dashuc"), "users");
    const env = { GIFTJOBS_PREFIX: uniquePrefix("dashuc"), GIFTJOBS_REDIS_URL: REDIS_URL };
    const run = await runCli(
      ["dashboard", "add-user", "Ana Lima", "--roles", "approve,operate", "--users", file],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const token =
      /token \(shown this once; give it to Ana Lima, it is kept nowhere\): (\S+)\n$/.exec(
        run.stdout,
      )?.[1];
    expect(run.stdout).toMatch(/^added Ana Lima \(operate, approve\) to /);
    expect(token).toMatch(/^gjd\.[0-9a-f]{12}\.[\w-]{43}$/);
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(token!.split(".")[2]);
    expect(text).toMatch(/\nAna Lima:operate,approve:[0-9a-f]{12}:scrypt\$16384\$8\$1\$/);
    expect(parseUsers(text, file)).toHaveLength(1);

    const again = await runCli(
      ["dashboard", "add-user", "ana lima", "--roles", "view", "--users", file],
      env,
    );
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /^giftjobs: error: .* line 4: user "Ana Lima" is already there: [^\n]+\n$/,
    );
    const role = await runCli(
      ["dashboard", "add-user", "bo", "--roles", "admin", "--users", file],
      env,
    );
    expect(role.code).toBe(2);
    expect(role.stderr).toBe(
      'giftjobs: error: --roles: unknown role "admin": the roles are view, operate, approve\n',
    );
    expect(await readFile(file, "utf8")).toBe(text);

    await writeFile(file, `${text}bo:view:zz:scrypt$1\n`);
    const start = await runCli(["dashboard", "--port", "0", "--users", file], env);
    expect(start.code).toBe(2);
    expect(start.stdout).toBe("");
    expect(start.stderr).toBe(
      `giftjobs: error: ${file} line 5: the token id "zz" is not 12 hex digits\n`,
    );
  });
});
