import { randomBytes } from "node:crypto";
import express, { type Request, type Response, Router } from "express";
import { audited } from "../audit/audited.js";
import type { AuditAction } from "../audit/entry.js";
import type { AuditTrail } from "../audit/trail.js";
import { fourEyesHold } from "../campaigns/four-eyes.js";
import { storedState } from "../campaigns/state.js";
import { type CampaignSummary, campaignSummary } from "../campaigns/summary.js";
import type { WorkerBeats } from "../campaigns/worker-beats.js";
import type { DailyLimit } from "../daily-limit.js";
import { UserError } from "../errors/user-error.js";
import { CAMPAIGN_NAME, type Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import type { AuditListing } from "./audit-table.js";
import { CAMPAIGN_ACTIONS, findAction } from "./campaign-actions.js";
import { FAILURE_STATUSES, type FailureStatus, failurePage } from "./campaign-failures.js";
import { campaignOverviews } from "./campaign-overviews.js";
import { renderCampaignPage, renderConfirmPage, renderMessagePage } from "./campaign-page.js";
import { RateMeter } from "./campaign-progress.js";
import { renderCampaignsPage } from "./campaigns-page.js";
import { CsrfToken } from "./csrf.js";
import { whoHtml } from "./login-routes.js";
import type { MinuteHistory, MinutePoint } from "./minute-history.js";
import { contentSecurityPolicy } from "./page-layout.js";
import { sendReport } from "./report-download.js";
import { actorOfRequest, mayDo, roleRefusal, userOf } from "./request-user.js";

export interface CampaignRoutesOptions {
  ledger: Ledger;
  /** The workers alive: a running campaign no worker serves shows as stalled. */
  workers?: WorkerBeats;
  /** Rows ended per minute, for the charts; without, none is drawn. */
  history?: MinuteHistory;
  /** Where bull-board is mounted. */
  boardPath: string;
  /** The action buttons and their POST routes; without, the routes answer 403. */
  allowActions: boolean;
  /**
   * Where a token is asked for, when the dashboard has sign-in. Who may act is the user a
   * request carries (request-user.ts): a request without one gets a link here instead of
   * buttons and CSRF token, and a user gets the buttons of their roles only.
   */
  loginPath?: string;
  /**
   * The audit trail: actions are recorded in it, and a campaign's page shows its entries.
   * Undefined when it cannot be opened (PostgreSQL away): only pause and cancel run then.
   */
  audit?: AuditTrail;
  /** The daily limit the dashboard's environment sets: Resume refuses as `orders resume` does. */
  dailyLimit?: DailyLimit;
  log: Logger;
}

/**
 * The dashboard's own pages: `/` and `/campaigns` (every campaign), `/campaigns.json`,
 * `/campaigns/:name` (one campaign, its failed rows), `/campaigns/:name/report.csv`, and with
 * actions allowed `POST /campaigns/:name/actions/:action`.
 */
export function campaignRoutes(options: CampaignRoutesOptions): Router {
  const { ledger, boardPath, log, workers, history } = options;
  const minutes = async (campaign: string): Promise<MinutePoint[]> =>
    history ? history.read(campaign) : [];
  const sparks = new SparkHistories(minutes);
  const meter = new RateMeter();
  const csrf = new CsrfToken();
  const router = Router();

  /** Sends a page; `render` gets the nonce and the header's who-is-signed-in HTML. */
  const page = (res: Response, status: number, render: (nonce: string, user: string) => string) => {
    const nonce = randomBytes(16).toString("base64");
    res
      .status(status)
      .set("Content-Security-Policy", contentSecurityPolicy(nonce))
      .set("Cache-Control", "no-store")
      .type("html")
      .send(render(nonce, whoHtml(userOf(res))));
  };
  const message = (res: Response, status: number, title: string, text: string) =>
    page(res, status, (nonce, user) =>
      renderMessagePage({ title, message: text, boardPath, nonce, user }),
    );

  /** The campaign named in the path, or a 404 page sent (and undefined). */
  const known = async (req: Request, res: Response): Promise<string | undefined> => {
    const name = String(req.params.name ?? "");
    if (CAMPAIGN_NAME.test(name) && (await ledger.campaigns.exists(name))) return name;
    message(res, 404, "no such campaign", `No campaign is named ${name}.`);
    return undefined;
  };

  const REPORT_WHAT = "download the report (it holds every e-mail address)";
  const campaignPage = async (
    res: Response,
    status: number,
    campaign: string,
    query: { page?: unknown; status?: unknown },
    result?: { ok: boolean; line: string },
  ) => {
    const [summary, meta, points, audit] = await Promise.all([
      campaignSummary(ledger, campaign, workers),
      ledger.campaigns.meta(campaign),
      minutes(campaign),
      auditEntries(campaign),
    ]);
    const chosen = FAILURE_STATUSES.find((s) => s === query.status);
    const listed: readonly FailureStatus[] = chosen ? [chosen] : FAILURE_STATUSES;
    const pageNumber = Number.parseInt(String(query.page ?? "1"), 10);
    const failures = await failurePage(
      ledger,
      campaign,
      listed,
      Number.isFinite(pageNumber) ? pageNumber : 1,
    );
    const context = { stored: storedState(meta), summary };
    const user = userOf(res);
    const allowed = options.allowActions && user !== undefined;
    const applies = CAMPAIGN_ACTIONS.filter((a) => a.shown(context));
    const actions = allowed
      ? {
          csrf: csrf.value,
          shown: applies.filter((a) => mayDo(user, a.role)),
          withheld: applies.filter((a) => !mayDo(user, a.role)),
        }
      : null;
    const loginPath = options.allowActions && !allowed ? options.loginPath : undefined;
    page(res, status, (nonce, who) =>
      renderCampaignPage({
        summary,
        failures,
        history: points,
        listed,
        actions,
        loginPath,
        mayDownload: mayDo(user, "operate"),
        fourEyes: storedState(meta) === "held" ? fourEyesHold(meta) : undefined,
        result,
        audit,
        boardPath,
        nonce,
        user: who,
      }),
    );
  };

  /**
   * The campaign's audit entries, the chain checked as they are read (docs/architecture/audit.md,
   * "Reading is verifying"), or undefined (logged) when the trail cannot be read.
   */
  const auditEntries = async (campaign: string): Promise<AuditListing | undefined> => {
    try {
      const read = await options.audit?.read({ campaign });
      if (!read) return undefined;
      return read.check.ok ? read : { ...read, problem: read.check.problem };
    } catch (error) {
      log.warn({ campaign, err: error }, "dashboard: the audit trail cannot be read");
      return undefined;
    }
  };

  router.get(["/", "/campaigns"], async (_req, res) => {
    const campaigns = await campaignOverviews(ledger, meter, workers);
    const histories = await sparks.read(campaigns);
    page(res, 200, (nonce, user) =>
      renderCampaignsPage(campaigns, { boardPath, nonce, histories, user }),
    );
  });
  router.get("/campaigns.json", async (_req, res) => {
    res
      .set("Cache-Control", "no-store")
      .json({ campaigns: await campaignOverviews(ledger, meter, workers) });
  });
  router.get("/campaigns/:name", async (req, res) => {
    const campaign = await known(req, res);
    if (campaign) await campaignPage(res, 200, campaign, req.query);
  });
  router.get("/campaigns/:name/report.csv", async (req, res) => {
    // The report holds every recipient's e-mail address: it needs the operate role
    // (docs/architecture/operators.md, "Dashboard users").
    const user = userOf(res);
    if (!user) return message(res, 401, "log in first", "The report needs a signed-in user.");
    if (!mayDo(user, "operate"))
      return message(res, 403, "refused", roleRefusal(user, "operate", REPORT_WHAT));
    const campaign = await known(req, res);
    if (campaign) await sendReport(ledger, campaign, res);
  });

  router.post(
    "/campaigns/:name/actions/:action",
    (req, res, next) => {
      // Checked before the body is read: without --allow-actions nothing of a POST is used.
      const user = userOf(res);
      const action = findAction(String(req.params.action));
      if (!options.allowActions)
        message(res, 403, "actions are off", "Actions need `giftjobs dashboard --allow-actions`.");
      else if (!user)
        message(res, 401, "log in first", "Actions need the dashboard token: log in first.");
      else if (action && !mayDo(user, action.role))
        message(res, 403, "refused", roleRefusal(user, action.role, action.name));
      else next();
    },
    express.urlencoded({ extended: false, limit: "4kb" }),
    async (req, res) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!csrf.matches(body.csrf)) {
        message(
          res,
          403,
          "refused",
          "The form's token is missing or stale (the dashboard restarted?): reload the campaign page and try again.",
        );
        return;
      }
      const campaign = await known(req, res);
      if (!campaign) return;
      const action = findAction(String(req.params.action));
      if (!action) {
        message(res, 404, "no such action", `No action is named ${String(req.params.action)}.`);
        return;
      }
      if (body.confirmed !== "yes") {
        page(res, 200, (nonce, user) =>
          renderConfirmPage({ campaign, action, csrf: csrf.value, boardPath, nonce, user }),
        );
        return;
      }
      const actor = actorOfRequest(req, res);
      const who = {
        campaign,
        action: action.name,
        user: actor.name,
        from: req.socket.remoteAddress,
      };
      try {
        if (!options.audit && !action.unrecorded)
          throw new UserError(
            "the audit trail cannot be written (see the dashboard's log): only pause and cancel run until it can",
          );
        const line = await audited(options.audit, actor, {
          action: action.name as AuditAction,
          campaign,
          details: { via: "dashboard" },
          run: (first) =>
            action.run(ledger, campaign, {
              actor,
              dailyLimit: options.dailyLimit,
              entryFirst: (outcome) => first({ outcome }),
            }),
          done: (outcome) => ({ outcome }),
        });
        log.info({ ...who, result: line }, "dashboard: campaign action");
        await campaignPage(res, 200, campaign, {}, { ok: true, line });
      } catch (error) {
        const line = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
        if (error instanceof UserError)
          log.warn({ ...who, error: line }, "dashboard: action refused");
        else log.error({ ...who, err: error }, "dashboard: action failed");
        await campaignPage(
          res,
          error instanceof UserError ? 409 : 500,
          campaign,
          {},
          {
            ok: false,
            line: `${action.name} failed: ${line}`,
          },
        );
      }
    },
  );
  return router;
}

/**
 * The histories of the list's sparklines, each read again only when its campaign's counts
 * moved (only a transition from sending to an end writes the minutes hash, and it moves the
 * counts in the same script): a page that updates every 5 s does not read every finished
 * campaign's whole history each time. The campaign's own page always reads it afresh.
 */
class SparkHistories {
  private readonly cache = new Map<string, { stamp: string; points: MinutePoint[] }>();

  constructor(private readonly minutes: (campaign: string) => Promise<MinutePoint[]>) {}

  async read(campaigns: CampaignSummary[]): Promise<Map<string, MinutePoint[]>> {
    const listed = new Set(campaigns.map((c) => c.campaign));
    for (const name of this.cache.keys()) if (!listed.has(name)) this.cache.delete(name);
    const entries = await Promise.all(
      campaigns.map(async (c) => {
        const stamp = [c.queued, c.in_flight, c.submitted, c.completed, c.failed_final].join("/");
        const hit = this.cache.get(c.campaign);
        if (hit?.stamp === stamp) return [c.campaign, hit.points] as const;
        const points = await this.minutes(c.campaign);
        this.cache.set(c.campaign, { stamp, points });
        return [c.campaign, points] as const;
      }),
    );
    return new Map(entries);
  }
}
