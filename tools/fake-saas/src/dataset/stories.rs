//! The hand-written stories of Acme (an online shop), in chronological order.
//!
//! Placeholders in texts are replaced when the records are built: `{jira}` (ACME-nnn),
//! `{linear}` (ENG-nnn), `{ticket}` (the Jira key, else the Linear one), `{issue}` and `{pr}`
//! (GitHub URLs), `{notion}` (the Notion page URL). A Slack message starting with
//! `#channel ` is posted in that channel instead of the story's.

use super::people::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Bug,
    Feature,
    Incident,
    Task,
    Doc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Team {
    Checkout,
    Billing,
    Payments,
    Search,
    Platform,
    Mobile,
    Growth,
    Security,
    Data,
    Support,
    Product,
    Company,
}

impl Team {
    pub(crate) fn channel(self) -> &'static str {
        match self {
            Team::Checkout => "eng-checkout",
            Team::Billing => "billing-eng",
            Team::Payments => "payments",
            Team::Search => "search-eng",
            Team::Platform => "platform",
            Team::Mobile => "mobile",
            Team::Growth => "growth",
            Team::Security => "security",
            Team::Data => "data-eng",
            Team::Support => "support-escalations",
            Team::Product => "product",
            Team::Company => "general",
        }
    }
    pub(crate) fn repo(self) -> &'static str {
        match self {
            Team::Platform | Team::Data => "acme/infra",
            Team::Mobile => "acme/mobile-app",
            _ => "acme/shop",
        }
    }
    pub(crate) fn label(self) -> &'static str {
        match self {
            Team::Checkout => "checkout",
            Team::Billing => "billing",
            Team::Payments => "payments",
            Team::Search => "search",
            Team::Platform => "platform",
            Team::Mobile => "mobile",
            Team::Growth => "growth",
            Team::Security => "security",
            Team::Data => "data",
            Team::Support => "support",
            Team::Product | Team::Company => "product",
        }
    }
}

/// A block of a Notion page body.
#[derive(Clone, Copy, Debug)]
pub(crate) enum B {
    H(&'static str),
    P(&'static str),
    L(&'static str),
}

pub(crate) struct Story {
    pub slug: &'static str,
    pub title: &'static str,
    pub kind: Kind,
    pub team: Team,
    pub channel: Option<&'static str>,
    pub date: &'static str,
    /// Days from the first report to the last update.
    pub days: u32,
    /// Still open at the end of the dataset.
    pub open: bool,
    pub owner: usize,
    pub reporter: usize,
    pub jira: bool,
    pub linear: bool,
    pub desc: &'static str,
    pub gh_issue: bool,
    /// Pull request title and body.
    pub pr: Option<(&'static str, &'static str)>,
    pub slack: &'static [(usize, &'static str)],
    /// Notion page title and body.
    pub notion: Option<(&'static str, &'static [B])>,
}

const BASE: Story = Story {
    slug: "",
    title: "",
    kind: Kind::Bug,
    team: Team::Checkout,
    channel: None,
    date: "2025-01-01",
    days: 7,
    open: false,
    owner: DIEGO,
    reporter: EMMA,
    jira: false,
    linear: false,
    desc: "",
    gh_issue: false,
    pr: None,
    slack: &[],
    notion: None,
};

use B::{H, L, P};

pub(crate) static STORIES: &[Story] = &[
    Story {
        slug: "search-reindex-slow",
        title: "Search index rebuild takes 6 hours",
        kind: Kind::Task,
        team: Team::Search,
        date: "2025-01-08",
        days: 19,
        owner: MEI,
        reporter: MEI,
        jira: true,
        linear: true,
        desc: "The nightly full rebuild of the product search index now takes about 6 hours (it was 50 minutes a year ago). It overlaps with the morning traffic ramp in Europe and the cluster serves stale prices until it finishes. The reindex job walks the catalog with a single worker and fetches every variant one by one.",
        gh_issue: true,
        pr: Some((
            "Parallelise catalog reindex across 8 workers",
            "Splits the catalog into 8 shards by product id and indexes them concurrently with bulk requests of 500 documents. Variants are loaded in one query per batch instead of one per product. Local run on the staging catalog: 41 minutes instead of 5h50.",
        )),
        slack: &[
            (
                MEI,
                "Heads up: last night's search index rebuild finished at 07:48 UTC, it took 6 hours again. Prices were stale until then.",
            ),
            (
                TOMAS,
                "That's the single-worker reindex job, right? It's been creeping up since we added variants to the index.",
            ),
            (
                MEI,
                "Yes. I filed {ticket}. Plan is to shard the reindex by product id and use bulk requests.",
            ),
            (
                SOFIA,
                "Does this explain the complaints about wrong prices on the sale banners this morning?",
            ),
            (
                MEI,
                "Very likely. PR for the parallel reindex is up: {pr} - staging rebuild went from 5h50 to 41 minutes.",
            ),
            (
                MEI,
                "Parallel reindex is live, tonight's rebuild took 38 minutes. Runbook updated: {notion}",
            ),
        ],
        notion: Some((
            "Search reindex runbook",
            &[
                H("When to run a full reindex"),
                P(
                    "The search index is rebuilt from the catalog database every night at 01:00 UTC. Run a manual full reindex only after a mapping change, an analyzer change, or when the nightly job failed. Price and stock changes are applied incrementally and never need a full rebuild.",
                ),
                H("How to run it"),
                L(
                    "Check the cluster health in Grafana (dashboard Search / Cluster): it must be green.",
                ),
                L("Start the job with `make reindex ENV=production SHARDS=8` from the infra repo."),
                L(
                    "The job writes to a new index (products-YYYYMMDD) and swaps the alias only when every shard finished.",
                ),
                L("Expect about 40 minutes for the full catalog with 8 workers."),
                H("If it fails"),
                P(
                    "A failed reindex leaves the alias on the previous index, so the storefront keeps working with yesterday's data. Delete the partial index, look at the worker logs in the search-reindex namespace and rerun. Page the search on-call if the alias swap itself failed.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "oncall-handbook",
        title: "On-call handbook",
        kind: Kind::Doc,
        team: Team::Platform,
        channel: Some("general"),
        date: "2025-01-15",
        days: 30,
        owner: AISHA,
        reporter: AISHA,
        slack: &[
            (
                AISHA,
                "I wrote down how on-call works for everyone who joins the rotation in February: {notion} Feedback welcome.",
            ),
            (
                MARCUS,
                "Thanks Aisha, this is great. Everyone on the rotation please read it before your first shift.",
            ),
            (
                DIEGO,
                "Question on the handbook: do we page for checkout error rate above 2% at night or only during business hours?",
            ),
            (
                AISHA,
                "Always. Checkout errors page 24/7, everything else in the warning tier waits until morning. I clarified it in the handbook.",
            ),
            (
                TOMAS,
                "Added the section about escalating to the database on-call and the Stripe status page to the on-call handbook.",
            ),
        ],
        notion: Some((
            "On-call handbook",
            &[
                H("The rotation"),
                P(
                    "Engineering runs one primary and one secondary on-call rotation, each a week long, handing over on Mondays at 10:00 Europe/Berlin. The schedule lives in PagerDuty. Swaps are fine, just update PagerDuty and tell the channel #platform.",
                ),
                H("What pages"),
                L("Checkout or payment error rate above 2% for 5 minutes, at any hour."),
                L("Storefront p95 latency above 1.5 s for 10 minutes."),
                L("Any failed database backup, replication lag above 60 s."),
                L(
                    "Warnings (disk above 80%, queue backlogs) go to Slack and wait for business hours.",
                ),
                H("When you get paged"),
                P(
                    "Acknowledge within 5 minutes. Open a thread in #incidents with what you see, even if you think it is noise. If customers are affected for more than 15 minutes, declare an incident, name an incident commander and post updates every 30 minutes.",
                ),
                P(
                    "Escalate early: the secondary on-call, then the owning team's lead, then the VP Engineering. Nobody is ever upset about being woken up for a real incident.",
                ),
                H("After the shift"),
                P(
                    "Write a short hand-over note in #platform. Every incident with customer impact gets a postmortem in Notion within five working days, using the postmortem template. Postmortems are blameless.",
                ),
                H("Useful links"),
                L("Stripe status page: status.stripe.com"),
                L("Runbooks: the Runbooks section in this workspace"),
                L("Database on-call: the #platform channel, handle @db-oncall"),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "password-reset-spam",
        title: "Password reset emails land in spam for Outlook users",
        kind: Kind::Bug,
        team: Team::Growth,
        channel: Some("support-escalations"),
        date: "2025-01-22",
        days: 9,
        owner: HANNAH,
        reporter: EMMA,
        jira: true,
        desc: "Customers with Outlook and Hotmail addresses report that password reset emails never arrive. Support found them in the junk folder. Our transactional mail domain sends with an SPF record but the DKIM signature uses the provider's domain, so DMARC alignment fails.",
        gh_issue: true,
        pr: Some((
            "Sign transactional mail with our own DKIM key",
            "Adds a DKIM key for mail.acme-shop.example, publishes the selector, and switches the mailer to sign with it. DMARC now aligns on both SPF and DKIM.",
        )),
        slack: &[
            (
                EMMA,
                "We got 23 tickets this week about password reset emails not arriving. All Outlook or Hotmail. They show up in junk.",
            ),
            (
                HANNAH,
                "I'll look. Probably DMARC alignment, our DKIM signature uses the mail provider's domain.",
            ),
            (
                HANNAH,
                "Confirmed, DKIM is not aligned. Filed {jira}, fix is to sign with our own key. {pr}",
            ),
            (
                EMMA,
                "Outlook test accounts receive the reset email in the inbox now. Thanks!",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "incident-lb-cert",
        title: "Incident 2025-02-03: checkout 502s after load balancer certificate rotation",
        kind: Kind::Incident,
        team: Team::Platform,
        channel: Some("incidents"),
        date: "2025-02-03",
        days: 4,
        owner: AISHA,
        reporter: AISHA,
        jira: true,
        desc: "From 14:02 to 14:49 UTC about 30% of checkout requests returned 502. The automatic certificate rotation on the public load balancer replaced the certificate but one of the three target groups kept the old listener config and failed the TLS handshake to the backends.",
        gh_issue: false,
        pr: Some((
            "Manage load balancer listeners and certificates in one Terraform module",
            "The listener certificate and the target group listeners were managed in two modules, so the rotation only updated one of them. This moves both into modules/public-lb and adds a check that every listener references the current certificate ARN.",
        )),
        slack: &[
            (
                AISHA,
                "Paged: checkout 502 rate at 31%. Looking. Incident commander: me.",
            ),
            (
                TOMAS,
                "LB logs show TLS handshake failures to the checkout target group only. Started 14:02, right after the certificate rotation.",
            ),
            (
                AISHA,
                "Rolled the listener back to the previous certificate at 14:47, 502s gone at 14:49. Customer impact: 47 minutes, roughly 30% of checkouts failed.",
            ),
            (
                MARCUS,
                "Thanks both. Postmortem please, and let's make sure rotation can't half-apply again.",
            ),
            (
                AISHA,
                "Postmortem is written: {notion} Follow-up {jira}, Terraform fix {pr}",
            ),
        ],
        notion: Some((
            "Postmortem: checkout 502s after certificate rotation (2025-02-03)",
            &[
                H("Summary"),
                P(
                    "On 2025-02-03 between 14:02 and 14:49 UTC, about 30% of checkout requests failed with HTTP 502. The public load balancer's certificate was rotated automatically, but the listener of the checkout target group kept a reference to the old certificate, which had been deleted.",
                ),
                H("Impact"),
                P(
                    "47 minutes of partial checkout failure. An estimated 410 orders failed; 260 of those customers retried successfully within the hour.",
                ),
                H("Timeline"),
                L("14:00 scheduled certificate rotation starts."),
                L("14:02 first 502s, alert fires at 14:07."),
                L("14:21 TLS handshake errors found in the load balancer logs."),
                L("14:47 listener rolled back to the previous certificate; 14:49 recovery."),
                H("Root cause"),
                P(
                    "The certificate and the listeners were managed in two Terraform modules. The rotation job applied only the certificate module, so one listener was left pointing at a certificate that no longer existed.",
                ),
                H("What we changed"),
                L("Both resources now live in one module and are applied together."),
                L(
                    "A CI check fails when a listener references a certificate that is not the current one.",
                ),
                L("Rotation now happens on Tuesdays at 09:00 UTC, when the team is around."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "cart-badge-stale",
        title: "Cart badge shows stale item count after login",
        kind: Kind::Bug,
        team: Team::Checkout,
        date: "2025-02-12",
        days: 6,
        owner: YUKI,
        reporter: HANNAH,
        linear: true,
        desc: "When a guest with items in the cart logs in, the guest cart is merged into the account cart but the badge in the header keeps showing the guest count until the page is reloaded. Customers think items were lost and add them again.",
        gh_issue: true,
        pr: Some((
            "Refresh the cart badge after the guest cart merge",
            "The merge endpoint now returns the merged cart and the header store is updated from it, instead of waiting for the next page load.",
        )),
        slack: &[
            (
                HANNAH,
                "Found a small one: log in with items in a guest cart and the cart badge still shows the old count. {linear}",
            ),
            (
                YUKI,
                "I'll take it, the merge response doesn't update the header store.",
            ),
            (YUKI, "Fix is up: {pr}"),
        ],
        ..BASE
    },
    Story {
        slug: "release-process",
        title: "Release process and deploy freeze calendar",
        kind: Kind::Doc,
        team: Team::Platform,
        date: "2025-02-26",
        days: 14,
        owner: TOMAS,
        reporter: MARCUS,
        slack: &[
            (
                TOMAS,
                "Wrote up how we ship: trunk-based, deploys on merge, and the freeze calendar for sales events. {notion}",
            ),
            (
                SOFIA,
                "Can we add the Black Friday and Christmas freezes for this year to the calendar now so marketing can plan around them?",
            ),
            (
                TOMAS,
                "Done, freeze windows for Black Friday week and 20 Dec to 2 Jan are in the release process page.",
            ),
        ],
        notion: Some((
            "Release process",
            &[
                H("How code reaches production"),
                P(
                    "We deploy from main. Every merged pull request is built, tested and deployed to staging automatically; production deploys happen after the smoke tests pass on staging, usually within 20 minutes of the merge. Feature flags hide unfinished work.",
                ),
                H("Rules"),
                L("Green CI and one approving review are required to merge."),
                L("Database migrations must be backwards compatible with the previous release."),
                L("Do not merge after 16:00 on Fridays unless it fixes an incident."),
                H("Deploy freezes"),
                P(
                    "During freeze windows only incident fixes are deployed, with approval from the on-call lead. Freeze windows: the week of Black Friday, and 20 December to 2 January.",
                ),
                H("Rolling back"),
                P(
                    "Use the Rollback button on the deploy dashboard; it redeploys the previous image in about 3 minutes. Migrations are not rolled back automatically.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "stripe-paymentintents",
        title: "Migrate payments to Stripe PaymentIntents",
        kind: Kind::Feature,
        team: Team::Payments,
        date: "2025-02-20",
        days: 62,
        owner: JONAS,
        reporter: JONAS,
        jira: true,
        linear: true,
        desc: "We still create card payments with the legacy Charges API. Strong Customer Authentication in the EU requires 3-D Secure for most card payments, which the Charges API cannot handle, and about 4% of EU payments are declined with authentication_required. Move checkout and subscriptions to PaymentIntents with automatic 3DS.",
        gh_issue: true,
        pr: Some((
            "Switch checkout to Stripe PaymentIntents with 3-D Secure",
            "Creates a PaymentIntent when the payment step opens and confirms it client side with Stripe.js, handling the 3DS challenge. The legacy Charges path stays behind the flag payments.legacy_charges for one release. Webhooks: payment_intent.succeeded and payment_intent.payment_failed now drive the order state.",
        )),
        slack: &[
            (
                JONAS,
                "Kicking off the PaymentIntents migration. Design doc: {notion} Tracking in {jira}.",
            ),
            (
                PRIYA,
                "Subscriptions renew off-session. With PaymentIntents we need to handle requires_action for renewals and email the customer a link.",
            ),
            (
                JONAS,
                "Good point, added an off-session section to the design. Renewal failures with authentication_required will send the customer to a hosted confirmation page.",
            ),
            (
                SOFIA,
                "What's the rollout plan? I'd like Germany and France first, they have the most SCA declines.",
            ),
            (
                JONAS,
                "Flag per country. DE and FR first week, then the rest of the EU, then everyone. PR: {pr}",
            ),
            (
                JONAS,
                "PaymentIntents is at 100% of traffic. EU authentication declines went from 4.1% to 0.6%.",
            ),
            (
                PRIYA,
                "Renewals with requires_action are working too, 37 customers confirmed via the hosted page last week.",
            ),
        ],
        notion: Some((
            "Payments migration: Stripe PaymentIntents",
            &[
                H("Why"),
                P(
                    "The Charges API cannot perform 3-D Secure, which Strong Customer Authentication requires for most EU card payments. 4.1% of EU card payments are currently declined with authentication_required, and the number grows as banks tighten enforcement.",
                ),
                H("Design"),
                P(
                    "The payment step creates a PaymentIntent on the server with the order total and the customer's saved payment method if any. The browser confirms it with Stripe.js, which shows the bank's challenge when needed. The order is marked paid only from the payment_intent.succeeded webhook, never from the browser redirect.",
                ),
                P(
                    "Subscriptions renew off-session. When a renewal needs authentication, the invoice stays open, the customer gets an email with a link to a hosted confirmation page, and we retry after they confirm.",
                ),
                H("Rollout"),
                L("Flag payments.payment_intents per country."),
                L("Week 1: Germany and France. Week 2: rest of the EU. Week 3: everyone."),
                L("Keep the legacy Charges path for one release as a kill switch."),
                H("Risks"),
                L(
                    "Double payment if both the redirect and the webhook mark the order paid: only the webhook may change the order state.",
                ),
                L("Webhook delays during Stripe incidents delay order confirmation emails."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "image-cache-headers",
        title: "Product images served without cache headers",
        kind: Kind::Bug,
        team: Team::Platform,
        date: "2025-03-04",
        days: 5,
        owner: TOMAS,
        reporter: HANNAH,
        linear: true,
        desc: "Product images from the image service have no Cache-Control header, so the CDN caches them for only 60 seconds (its default) and browsers revalidate on every page view. Image egress from the origin doubled in February.",
        gh_issue: false,
        pr: Some((
            "Set immutable cache headers on resized product images",
            "Resized images have content-hashed URLs, so they can be cached forever: Cache-Control: public, max-age=31536000, immutable. Originals keep a one-day max-age.",
        )),
        slack: &[
            (
                HANNAH,
                "Lighthouse complains that product images have no cache policy. Is that on purpose?",
            ),
            (
                TOMAS,
                "Nope. The image service never set Cache-Control, so the CDN uses its 60 s default. That explains the egress bill. {linear}",
            ),
            (
                TOMAS,
                "{pr} is deployed, CDN hit ratio for images went from 71% to 98%.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "invoice-retry-double-charge",
        title: "Invoice retry job double-charges EU customers",
        kind: Kind::Bug,
        team: Team::Billing,
        date: "2025-03-11",
        days: 16,
        owner: PRIYA,
        reporter: EMMA,
        jira: true,
        desc: "Several EU customers were charged twice for the same subscription invoice. The invoice retry job retries failed payments every 6 hours; when a first attempt needed 3-D Secure and the customer completed it late, the next retry created a second successful charge. The job is not idempotent per invoice.",
        gh_issue: true,
        pr: Some((
            "Make invoice retry idempotent per invoice and attempt",
            "Each retry now uses the idempotency key invoice-<id>-attempt-<n> and checks the invoice's latest PaymentIntent before creating a new one. An invoice with a succeeded or processing payment is never retried.",
        )),
        slack: &[
            (
                EMMA,
                "Three customers from Germany and one from Spain were charged twice for their March subscription. Refunded them, but what happened?",
            ),
            (
                PRIYA,
                "Looking. All four had a renewal that needed 3-D Secure. The invoice retry job ran while the first payment was still pending authentication.",
            ),
            (
                PRIYA,
                "The invoice retry job is paused until Monday. I filed {jira}.",
            ),
            (
                JONAS,
                "The retry job should check the latest PaymentIntent on the invoice, and pass an idempotency key per attempt.",
            ),
            (
                PRIYA,
                "Fix: {pr}. Also found 11 more double charges going back to January, all refunded now.",
            ),
            (
                PRIYA,
                "Invoice retry is back on with the idempotency fix. Postmortem: {notion}",
            ),
        ],
        notion: Some((
            "Postmortem: duplicate EU invoice charges",
            &[
                H("Summary"),
                P(
                    "Between January and March 2025, 15 subscription invoices were paid twice. All affected customers were in the EU and had a renewal that required 3-D Secure authentication.",
                ),
                H("Root cause"),
                P(
                    "The invoice retry job runs every 6 hours and retries every open invoice with a failed payment. A payment waiting for authentication is not failed, but the job only looked at the invoice status, which stays open until the payment succeeds. When the customer authenticated after the next retry had already charged the card, both payments succeeded.",
                ),
                H("Fix"),
                L(
                    "The job checks the latest PaymentIntent of the invoice and skips invoices with a payment in processing or requires_action.",
                ),
                L("Each attempt uses the idempotency key invoice-<id>-attempt-<n>."),
                L(
                    "A nightly reconciliation report flags invoices with more than one successful payment.",
                ),
                H("Customer impact"),
                P(
                    "15 customers charged twice, between 9 and 49 euros each. All were refunded and received an apology email with a voucher.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "postmortem-template",
        title: "Postmortem template",
        kind: Kind::Doc,
        team: Team::Platform,
        date: "2025-03-20",
        days: 2,
        owner: AISHA,
        reporter: AISHA,
        slack: &[(
            AISHA,
            "#incidents New postmortem template, please use it for every incident from now on: {notion}",
        )],
        notion: Some((
            "Postmortem template",
            &[
                H("Summary"),
                P("Two or three sentences: what happened, when, and who was affected."),
                H("Impact"),
                P("Duration, number of customers or orders affected, revenue impact if known."),
                H("Timeline"),
                L("All times in UTC. Detection, escalation, mitigation, resolution."),
                H("Root cause"),
                P(
                    "Explain the technical cause. Postmortems are blameless: describe what the system allowed, not who made a mistake.",
                ),
                H("Action items"),
                L("Each with an owner and a ticket."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "search-accents",
        title: "Search returns no results for queries with accents",
        kind: Kind::Bug,
        team: Team::Search,
        date: "2025-03-25",
        days: 8,
        owner: MEI,
        reporter: EMMA,
        linear: true,
        desc: "Searching for creme brulee torch finds nothing, but crème brûlée finds the product, and vice versa for products whose names have no accents. The search analyzer does not fold diacritics, so the query and the indexed names must match accent for accent.",
        gh_issue: true,
        pr: Some((
            "Fold diacritics in the search analyzer",
            "Adds the asciifolding filter to the product name and description analyzers, at index and query time. Requires a full reindex, which now takes 40 minutes.",
        )),
        slack: &[
            (
                EMMA,
                "A customer says search is broken for French product names. creme brulee gives nothing, crème brûlée works.",
            ),
            (
                MEI,
                "The analyzer doesn't fold accents. Easy fix, needs a reindex. {linear}",
            ),
            (
                MEI,
                "Deployed {pr} and reindexed. Accented and unaccented queries now return the same results.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "onboarding-guide",
        title: "Engineering onboarding guide",
        kind: Kind::Doc,
        team: Team::Company,
        date: "2025-04-02",
        days: 20,
        owner: MARCUS,
        reporter: MARCUS,
        slack: &[
            (
                MARCUS,
                "Three new engineers start next week. I refreshed the engineering onboarding guide: {notion}",
            ),
            (
                YUKI,
                "As the most recent new joiner: the local setup section was the part I struggled with. Added the steps for the seed data script.",
            ),
            (
                MARCUS,
                "Thanks Yuki. Buddies for next week: Diego for checkout, Mei for search, Tomás for platform.",
            ),
        ],
        notion: Some((
            "Engineering onboarding",
            &[
                H("Your first week"),
                L(
                    "Day 1: laptop, accounts (GitHub, Slack, Notion, Jira, Linear, PagerDuty), meet your buddy.",
                ),
                L(
                    "Day 2: run the shop locally and place an order with the test card 4242 4242 4242 4242.",
                ),
                L(
                    "Day 3 to 5: pick a starter issue labelled good first issue and ship it to production.",
                ),
                H("Where things are"),
                P(
                    "Code lives in the acme GitHub organisation: acme/shop is the storefront and checkout monolith, acme/infra holds Terraform and Kubernetes manifests, acme/mobile-app is the React Native app. Customer-facing work is tracked in Jira (project ACME), engineering work in Linear (team ENG). Design docs, runbooks and postmortems live in Notion.",
                ),
                H("Local setup"),
                P(
                    "Install Docker and the toolchain with make bootstrap, then make dev starts Postgres, Redis, the search cluster and the shop. make seed loads a catalog of 2,000 products and a few test customers.",
                ),
                H("How we work"),
                P(
                    "Small pull requests, reviewed within a working day. We deploy continuously from main; read the release process page before your first merge. Everybody joins the on-call rotation after three months.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "giftcard-discount",
        title: "Gift cards cannot be combined with discount codes",
        kind: Kind::Feature,
        team: Team::Checkout,
        date: "2025-04-09",
        days: 21,
        owner: DIEGO,
        reporter: SOFIA,
        jira: true,
        desc: "Applying a gift card removes any discount code already on the order, and applying a code removes the gift card. Customers contact support to combine them. Discounts should apply to the order total first and the gift card should pay the remaining amount.",
        gh_issue: true,
        pr: Some((
            "Allow gift cards together with discount codes",
            "Gift cards become a payment method instead of an adjustment: discounts are computed first, then the gift card balance is applied to the remaining total, and the card pays the rest.",
        )),
        slack: &[
            (
                SOFIA,
                "Support gets about 40 tickets a month from people who want to use a gift card and a discount code together. Can we support that? {jira}",
            ),
            (
                DIEGO,
                "Yes, but gift cards are modelled as a negative adjustment and adjustments are exclusive. We need to treat gift cards as a payment method.",
            ),
            (
                DIEGO,
                "{pr} is ready for review. Gift card applies after discounts, card pays the rest.",
            ),
            (
                EMMA,
                "Just tested on staging with a 10% code and a 25 euro gift card, works. Thanks Diego!",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "android15-crash",
        title: "Mobile app crashes on Android 15 when opening order history",
        kind: Kind::Bug,
        team: Team::Mobile,
        date: "2025-04-22",
        days: 6,
        owner: KWAME,
        reporter: EMMA,
        linear: true,
        desc: "Since Android 15 rolled out on Pixel devices, the app crashes when customers open Orders. Crashlytics shows an IllegalStateException from the date picker library we use to filter orders by month.",
        gh_issue: true,
        pr: Some((
            "Upgrade the date picker and guard the order filter on Android 15",
            "Upgrades react-native-date-picker to 5.0.4 which fixes the Android 15 crash, and falls back to the unfiltered order list if the picker fails to open.",
        )),
        slack: &[
            (
                KWAME,
                "Crashlytics: 1,200 crashes yesterday, all Android 15, all when opening order history. {linear}",
            ),
            (
                KWAME,
                "It's the date picker library. 5.0.4 has the fix. {pr}",
            ),
            (
                KWAME,
                "Hotfix 3.14.1 is live in the Play Store, crash-free sessions back to 99.8%.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "checkout-timeout-50",
        title: "Checkout times out with more than 50 items",
        kind: Kind::Bug,
        team: Team::Checkout,
        date: "2025-05-02",
        days: 12,
        owner: DIEGO,
        reporter: EMMA,
        jira: true,
        linear: true,
        desc: "Add 51 items to the cart, press Pay: the spinner never stops and the request fails with a gateway timeout after 30 seconds. Carts with 50 items or fewer work. Mostly affects business customers ordering office supplies in bulk.",
        gh_issue: true,
        pr: Some((
            "Batch inventory reservation in checkout",
            "Inventory was reserved with one call to the warehouse API per cart line, sequentially, each taking 400-600 ms. This reserves all lines in one batch call and moves the tax calculation out of the loop. A 120-item cart now checks out in 1.4 s.",
        )),
        slack: &[
            (
                EMMA,
                "A business customer can't place an order with 64 items, the checkout spinner never stops. Smaller orders work.",
            ),
            (
                DIEGO,
                "Reproduced: anything over 50 items hits the 30 s gateway timeout. Filed {jira}.",
            ),
            (
                DIEGO,
                "Trace shows one inventory reservation call per cart line, sequential, ~500 ms each. 51 items is just over the gateway timeout.",
            ),
            (
                YUKI,
                "The warehouse API has a batch reserve endpoint since last year, we never switched to it.",
            ),
            (
                DIEGO,
                "{pr} uses the batch endpoint. 120 items check out in 1.4 s on staging.",
            ),
            (
                DIEGO,
                "Deployed. Wrote up the investigation with the traces: {notion}",
            ),
        ],
        notion: Some((
            "Checkout performance investigation (May 2025)",
            &[
                H("Problem"),
                P(
                    "Checkouts with more than 50 cart lines timed out after 30 seconds at the API gateway. Business customers who order in bulk were affected; support counted 18 failed orders in April.",
                ),
                H("Findings"),
                P(
                    "The payment step reserved inventory with one request per cart line to the warehouse API, sequentially. Each call takes 400 to 600 ms, so 51 lines take about 25 s, and tax calculation adds 3 to 5 s on top.",
                ),
                L("p50 checkout time for 10 items: 6.1 s; for 50 items: 27 s."),
                L("The warehouse API has offered POST /reservations/batch since 2024."),
                H("Changes"),
                L("Reserve all lines with one batch call."),
                L("Compute taxes once per order instead of once per line."),
                L("Add a load test with a 200-item cart to the nightly suite."),
                H("Result"),
                P(
                    "A 120-item cart checks out in 1.4 s. p95 checkout latency for all carts dropped from 7.8 s to 2.1 s.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "incident-orders-index",
        title: "Incident 2025-05-14: orders API latency spike from a missing index",
        kind: Kind::Incident,
        team: Team::Platform,
        channel: Some("incidents"),
        date: "2025-05-14",
        days: 3,
        owner: TOMAS,
        reporter: AISHA,
        jira: true,
        desc: "The order history endpoint p95 latency went from 180 ms to 9 s after a migration dropped and recreated the orders table index on (customer_id, created_at) without CONCURRENTLY. Queries fell back to sequential scans on 40 million rows for 35 minutes.",
        pr: Some((
            "Recreate orders index concurrently and lint migrations",
            "Adds a migration linter to CI that rejects CREATE INDEX without CONCURRENTLY and DROP INDEX on tables above 1 million rows.",
        )),
        slack: &[
            (
                AISHA,
                "Orders API p95 is at 9 seconds, database CPU at 100%. Paging Tomás.",
            ),
            (
                TOMAS,
                "The 10:30 deploy ran a migration that dropped the customer_id, created_at index on orders. Recreating it now, concurrently.",
            ),
            (
                TOMAS,
                "Index is back, latency normal since 11:12. The migration should never have passed review. Ticket {jira}, linter PR {pr}",
            ),
            (AISHA, "Postmortem: {notion}"),
        ],
        notion: Some((
            "Postmortem: orders API latency spike (2025-05-14)",
            &[
                H("Summary"),
                P(
                    "For 35 minutes the order history and account pages were very slow or timed out. A migration dropped the index orders(customer_id, created_at) and recreated it without CONCURRENTLY, holding a lock and then leaving the table without the index until the rebuild finished.",
                ),
                H("Action items"),
                L("Migration linter in CI (done)."),
                L("Migrations touching tables above 1 million rows need a review from platform."),
                L("Alert on sequential scans of the orders table."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "apple-pay",
        title: "Add Apple Pay to web checkout",
        kind: Kind::Feature,
        team: Team::Payments,
        date: "2025-05-27",
        days: 24,
        owner: JONAS,
        reporter: SOFIA,
        linear: true,
        desc: "Offer Apple Pay in Safari on the payment step using the Stripe Payment Request Button. Needs domain verification for www.acme-shop.example and the express checkout layout from design.",
        gh_issue: true,
        pr: Some((
            "Apple Pay on the payment step via the Payment Request Button",
            "Registers the apple-developer-merchantid-domain-association file, adds the Payment Request Button above the card form when the browser supports it, and passes the shipping options to the wallet sheet.",
        )),
        slack: &[
            (
                SOFIA,
                "Apple Pay is the most requested feature in the Q2 survey. Can we get it into web checkout before the summer sale? {linear}",
            ),
            (
                JONAS,
                "Doable with the Payment Request Button since we're on PaymentIntents now. Need design for the express checkout area.",
            ),
            (
                HANNAH,
                "Designs are in Figma, express checkout buttons above the card form.",
            ),
            (
                JONAS,
                "Apple Pay is live for Safari users: {pr}. 9% of Safari checkouts used it on day one.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "q3-launch-plan",
        title: "Q3 launch plan",
        kind: Kind::Doc,
        team: Team::Product,
        date: "2025-06-05",
        days: 40,
        owner: SOFIA,
        reporter: SOFIA,
        jira: true,
        desc: "Readiness checklist for the Q3 launches: summer sale, Apple Pay, the new product detail page and the loyalty pilot. Each launch needs a go/no-go from engineering, support and marketing.",
        slack: &[
            (
                SOFIA,
                "Q3 launch plan is up for review: {notion} Please comment by Friday, especially on dates.",
            ),
            (
                MARCUS,
                "Engineering is fine with the dates except the new product detail page, which needs two more weeks after the summer sale freeze.",
            ),
            (
                EMMA,
                "Support needs the FAQ for Apple Pay a week before launch so we can train the team.",
            ),
            (
                SOFIA,
                "Updated the Q3 launch plan: PDP moves to 8 September, Apple Pay FAQ due 20 June. Checklist tracked in {jira}.",
            ),
        ],
        notion: Some((
            "Q3 launch plan",
            &[
                H("Goals"),
                P(
                    "Grow conversion on mobile by 10% and repeat purchases by 5% by the end of September. The Q3 launches support those two goals.",
                ),
                H("Launches"),
                L("Apple Pay on web checkout: 24 June."),
                L("Summer sale: 7 to 20 July, deploy freeze 6 to 8 July."),
                L("New product detail page: 8 September, behind a 50% experiment first."),
                L("Loyalty pilot with 2,000 customers: 22 September."),
                H("Go/no-go"),
                P(
                    "Each launch has a go/no-go meeting two days before, with engineering, support and marketing. Support signs off only when the FAQ and macros are ready; engineering signs off when load tests pass and dashboards exist.",
                ),
                H("Risks"),
                P(
                    "The summer sale overlaps with holidays in the platform team. Aisha and Tomás will not be away at the same time; the on-call rotation for July is already confirmed.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "canada-tax",
        title: "Tax calculation wrong for Canadian provinces",
        kind: Kind::Bug,
        team: Team::Billing,
        date: "2025-06-16",
        days: 10,
        owner: PRIYA,
        reporter: EMMA,
        jira: true,
        desc: "Orders shipped to Quebec are charged 5% GST only, without the 9.975% QST, and orders to Ontario are charged GST plus PST instead of the 13% HST. The tax table only distinguishes countries, not provinces.",
        gh_issue: true,
        pr: Some((
            "Province-level tax rates for Canada",
            "Adds a province dimension to the tax table with GST, HST, PST and QST rates, and selects the rate from the shipping address province.",
        )),
        slack: &[
            (
                EMMA,
                "A customer in Montreal says we didn't charge QST. Another in Toronto says we charged PST on top of GST, which Ontario doesn't have.",
            ),
            (
                PRIYA,
                "Our tax table is per country. Canada needs province rates. {jira}",
            ),
            (
                PRIYA,
                "{pr} adds provinces. Finance wants a list of affected orders since January, Lena can you pull it?",
            ),
            (
                LENA,
                "812 Canadian orders since January, 214 to Quebec. Sent the export to finance.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "api-rate-limits",
        title: "Rate limit the public product API",
        kind: Kind::Feature,
        team: Team::Platform,
        date: "2025-06-25",
        days: 18,
        owner: TOMAS,
        reporter: RAVI,
        linear: true,
        desc: "The public product API has no rate limit. A price comparison crawler sent 1,800 requests per second last Sunday and slowed down the storefront. Add per-key and per-IP limits at the gateway.",
        gh_issue: false,
        pr: Some((
            "Per-key and per-IP rate limits on the public API",
            "Token bucket limits at the gateway: 20 req/s per API key, 5 req/s per IP without key. Responses over the limit get 429 with Retry-After and X-RateLimit-* headers.",
        )),
        slack: &[
            (
                RAVI,
                "A crawler hit the public product API at 1,800 req/s on Sunday and the storefront p95 doubled. We need rate limits. {linear}",
            ),
            (
                TOMAS,
                "Gateway supports token buckets. Proposal in {notion}, 20 req/s per key, 5 per IP.",
            ),
            (
                TOMAS,
                "Rate limits are on, {pr}. The crawler now gets 429s with Retry-After.",
            ),
        ],
        notion: Some((
            "Public API rate limits",
            &[
                H("Limits"),
                L("20 requests per second per API key, burst 40."),
                L("5 requests per second per IP address for unauthenticated calls."),
                L("Partners can get higher limits on request."),
                H("Responses"),
                P(
                    "Over the limit the API answers 429 Too Many Requests with a Retry-After header in seconds and X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset headers.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "abandoned-cart-twice",
        title: "Abandoned cart emails sent twice",
        kind: Kind::Bug,
        team: Team::Growth,
        date: "2025-07-08",
        days: 7,
        owner: HANNAH,
        reporter: EMMA,
        jira: true,
        desc: "Customers receive the abandoned cart reminder twice, one minute apart. Since the scheduler moved to two replicas, both replicas pick up the hourly job.",
        gh_issue: true,
        pr: Some((
            "Run the abandoned cart job under a distributed lock",
            "The hourly job takes a Postgres advisory lock, so only one replica sends reminders. Also records sent reminders per cart to never send the same reminder twice.",
        )),
        slack: &[
            (
                EMMA,
                "People are complaining about getting the abandoned cart email twice. Some unsubscribed because of it.",
            ),
            (
                HANNAH,
                "Both scheduler replicas run the job since the move to two replicas. {jira}",
            ),
            (HANNAH, "Fixed with an advisory lock: {pr}"),
        ],
        ..BASE
    },
    Story {
        slug: "incident-webhook-backlog",
        title: "Incident 2025-07-17: payment webhook backlog after Stripe outage",
        kind: Kind::Incident,
        team: Team::Payments,
        channel: Some("incidents"),
        date: "2025-07-17",
        days: 5,
        owner: JONAS,
        reporter: AISHA,
        jira: true,
        desc: "During a partial Stripe outage webhooks were delivered up to 3 hours late. Orders stayed in pending payment, confirmation emails were not sent and customers paid twice. After recovery, 4,000 webhooks arrived within minutes and overloaded the webhook worker.",
        gh_issue: true,
        pr: Some((
            "Replay webhooks from the dead-letter queue and reconcile pending orders",
            "Webhook processing moves to a queue with 8 workers and a dead-letter queue. A reconciliation job polls Stripe for orders pending payment for more than 15 minutes.",
        )),
        slack: &[
            (
                AISHA,
                "Pending payment orders piling up, 600 in the last hour. Stripe status page shows degraded webhooks.",
            ),
            (
                JONAS,
                "Confirmed, Stripe is delaying webhooks. Orders are paid but we don't know it. Support, customers may see pending orders.",
            ),
            (
                EMMA,
                "We're getting tickets from customers who paid twice because the order said pending.",
            ),
            (
                JONAS,
                "Stripe recovered, 4,000 webhooks arrived at once and the worker fell over. Scaling it up and replaying.",
            ),
            (
                JONAS,
                "All orders reconciled. Follow-up {jira}: queue-based processing plus a reconciliation job, {pr}. Postmortem: {notion}",
            ),
        ],
        notion: Some((
            "Postmortem: payment webhook backlog (2025-07-17)",
            &[
                H("Summary"),
                P(
                    "A partial Stripe outage delayed payment webhooks by up to three hours. Because order state depends entirely on webhooks, 1,900 paid orders stayed pending, and 73 customers paid a second time. After Stripe recovered, the burst of webhooks overloaded our single webhook worker.",
                ),
                H("What went well"),
                L("Support spotted the double payments quickly and refunded them the same day."),
                H("What we changed"),
                L("Webhooks are queued and processed by 8 workers, with a dead-letter queue."),
                L(
                    "A reconciliation job asks Stripe about orders pending payment for more than 15 minutes.",
                ),
                L(
                    "The order page tells customers that payment confirmation can take a few minutes and not to pay again.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "dark-mode",
        title: "Dark mode for the storefront",
        kind: Kind::Feature,
        team: Team::Growth,
        date: "2025-07-29",
        days: 30,
        owner: HANNAH,
        reporter: SOFIA,
        linear: true,
        desc: "Support a dark colour scheme following prefers-color-scheme, with a toggle in the account menu. Product photos keep their white background; everything else uses the new design tokens.",
        gh_issue: true,
        pr: Some((
            "Dark mode with design tokens and a theme toggle",
            "Moves every colour to CSS custom properties, adds the dark token set, honours prefers-color-scheme and stores the explicit choice in a cookie.",
        )),
        slack: &[
            (
                SOFIA,
                "Dark mode keeps coming up in app store reviews and on social. Let's do it on web first. {linear}",
            ),
            (
                HANNAH,
                "We first need to move all hard-coded colours to design tokens, about 300 places. Then dark mode is mostly a second token set.",
            ),
            (
                HANNAH,
                "Dark mode PR is up: {pr}. Please try it on staging with your OS in dark mode.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "postgres-16",
        title: "Upgrade Postgres 13 to 16",
        kind: Kind::Task,
        team: Team::Platform,
        date: "2025-08-06",
        days: 35,
        owner: TOMAS,
        reporter: TOMAS,
        jira: true,
        linear: true,
        desc: "Postgres 13 reaches end of life in November 2025. Upgrade the primary database cluster to 16 using logical replication to a new cluster, with a cutover under 5 minutes of read-only mode.",
        gh_issue: true,
        pr: Some((
            "Provision the Postgres 16 cluster and logical replication",
            "Terraform for the new pg16 cluster, publication/subscription setup, and the cutover script with the read-only switch and sequence sync.",
        )),
        slack: &[
            (
                TOMAS,
                "Plan for the Postgres 16 upgrade: {notion} Logical replication to a new cluster, cutover with a few minutes of read-only.",
            ),
            (
                PRIYA,
                "Billing jobs must be paused during the cutover, the invoice retry job especially.",
            ),
            (
                TOMAS,
                "Noted, added to the checklist. Rehearsal on staging went fine, 2 min 40 s read-only.",
            ),
            (
                TOMAS,
                "#platform Production cutover to Postgres 16 done at 06:12 UTC, 3 minutes read-only. {jira} can be closed.",
            ),
        ],
        notion: Some((
            "Postgres 16 upgrade plan",
            &[
                H("Approach"),
                P(
                    "We build a new Postgres 16 cluster and replicate from the 13 cluster with logical replication. Once replication lag is near zero we switch the application to read-only, wait for the last changes, sync sequences and point the application at the new cluster.",
                ),
                H("Cutover checklist"),
                L("Announce the maintenance window in #general and on the status page."),
                L("Pause billing jobs, including the invoice retry job, and the warehouse sync."),
                L("Switch the shop to read-only mode."),
                L("Wait for replication lag 0, sync sequences, switch the connection string."),
                L("Smoke test checkout with a real card, resume jobs."),
                H("Rollback"),
                P(
                    "Until writes happen on the new cluster, rollback is just pointing back at the old one. After that we would need reverse replication, which is set up but not tested under load.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "refund-currency",
        title: "Refund emails show the wrong currency",
        kind: Kind::Bug,
        team: Team::Billing,
        date: "2025-08-19",
        days: 6,
        owner: PRIYA,
        reporter: EMMA,
        jira: true,
        desc: "Refund confirmation emails for orders paid in GBP or CHF show the amount with a euro sign. The amount is right, the currency formatting uses the shop default.",
        gh_issue: true,
        pr: Some((
            "Format refund amounts in the order currency",
            "The refund email template now formats with the order's currency and the customer's locale.",
        )),
        slack: &[
            (
                EMMA,
                "UK customers get refund emails saying €25.00 when they paid £25.00. They think we refunded in euros.",
            ),
            (
                PRIYA,
                "Template uses the shop default currency. {jira}, fix in {pr}.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "warehouse-sync-emoji",
        title: "Warehouse sync drops orders with emoji in the address",
        kind: Kind::Bug,
        team: Team::Data,
        date: "2025-08-28",
        days: 9,
        owner: LENA,
        reporter: EMMA,
        linear: true,
        desc: "Orders whose shipping address contains an emoji never reach the warehouse. The sync writes a CSV in Latin-1 for the warehouse SFTP import, the encoder throws, and the batch silently skips the row.",
        gh_issue: true,
        pr: Some((
            "Transliterate addresses for the warehouse export and alert on skipped rows",
            "Non-Latin-1 characters are transliterated or removed before writing the warehouse CSV; every skipped row now raises an alert with the order number.",
        )),
        slack: &[
            (
                EMMA,
                "Customer's order from two weeks ago never shipped. The address is 'Flat 3 🏠 Rose Cottage'. Yes really.",
            ),
            (
                LENA,
                "The warehouse export is Latin-1 and drops rows it can't encode, silently. Found 17 more orders. {linear}",
            ),
            (
                LENA,
                "{pr} transliterates and alerts on skipped rows. The 18 orders are re-sent.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "samesite-cookies",
        title: "Security review: session cookies missing SameSite",
        kind: Kind::Task,
        team: Team::Security,
        date: "2025-09-09",
        days: 14,
        owner: RAVI,
        reporter: RAVI,
        jira: true,
        desc: "The September security review found that the session cookie has no SameSite attribute and the CSRF token is not checked on two account endpoints (change email, delete address). Set SameSite=Lax, add CSRF checks, and add a test that every state-changing route is protected.",
        gh_issue: true,
        pr: Some((
            "SameSite=Lax session cookies and CSRF checks on account endpoints",
            "Sets SameSite=Lax and Secure on the session cookie, adds the CSRF middleware to the two missing routes, and adds a route table test that fails when a POST, PUT or DELETE route has no CSRF protection.",
        )),
        slack: &[
            (
                RAVI,
                "Security review for September is done: {notion} One high finding, session cookie without SameSite plus two routes without CSRF check. {jira}",
            ),
            (
                DIEGO,
                "The change email route is mine, sorry. Will review the PR.",
            ),
            (RAVI, "{pr} merged. Nothing exploitable found in the logs."),
        ],
        notion: Some((
            "Security review September 2025",
            &[
                H("Scope"),
                P(
                    "Storefront authentication, account pages, the public product API and the admin panel.",
                ),
                H("Findings"),
                L(
                    "High: session cookie without SameSite; the change email and delete address endpoints lacked CSRF checks.",
                ),
                L("Medium: admin panel sessions last 30 days; reduce to 12 hours."),
                L("Low: verbose error pages on the public API reveal framework versions."),
                H("Follow-up"),
                P(
                    "The high finding was fixed within a week. The medium and low findings are tracked in Jira with the security label.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "black-friday-readiness",
        title: "Black Friday load test plan",
        kind: Kind::Task,
        team: Team::Platform,
        date: "2025-09-18",
        days: 60,
        owner: AISHA,
        reporter: MARCUS,
        jira: true,
        linear: true,
        desc: "Black Friday 2025 traffic is forecast at 6x a normal Friday peak. Load test checkout, search and the product pages at 8x, fix the bottlenecks found, and agree on the freeze and on-call plan.",
        slack: &[
            (
                MARCUS,
                "Black Friday forecast from marketing: 6x normal peak. Aisha is driving readiness, plan in {notion}",
            ),
            (
                AISHA,
                "First load test at 4x: checkout fine, search p95 at 2.4 s, the product page cache hit ratio drops under load. Tickets in {linear}.",
            ),
            (
                MEI,
                "Search: adding two data nodes and caching autocomplete results for 60 s should cover it.",
            ),
            (
                AISHA,
                "Load test at 8x passed today. Freeze starts Monday of Black Friday week, on-call doubled.",
            ),
        ],
        notion: Some((
            "Black Friday 2025 readiness",
            &[
                H("Forecast"),
                P(
                    "Marketing forecasts 6x the normal Friday peak on Black Friday between 07:00 and 10:00 UTC, and 4x on Cyber Monday. We test at 8x.",
                ),
                H("Load tests"),
                L("Round 1 at 4x: search p95 2.4 s, product page cache hit ratio drops to 60%."),
                L("Round 2 at 6x after fixes: all p95 below 800 ms."),
                L("Round 3 at 8x: passed, checkout queue depth peaked at 340."),
                H("On the day"),
                P(
                    "Deploy freeze all week. Two primary on-calls, plus one engineer each from checkout, payments and search in a war room channel. Stripe and the CDN have been told about our expected volume.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "autocomplete-slow",
        title: "Search autocomplete is slow on mobile networks",
        kind: Kind::Bug,
        team: Team::Search,
        date: "2025-09-30",
        days: 12,
        owner: MEI,
        reporter: KWAME,
        linear: true,
        desc: "Autocomplete suggestions take more than a second on 3G. Every keystroke sends a request, the response includes full product objects (about 40 KB) instead of names and thumbnails, and earlier requests are not cancelled.",
        gh_issue: true,
        pr: Some((
            "Slim autocomplete responses and debounce requests",
            "Autocomplete returns id, name, thumbnail and price only (2 KB), requests are debounced by 150 ms and stale ones aborted. Results cached at the edge for 60 s.",
        )),
        slack: &[
            (
                KWAME,
                "Autocomplete on a throttled 3G connection takes 1.3 s per keystroke in the app. {linear}",
            ),
            (
                MEI,
                "The response returns the whole product document. Slimming it down and adding edge caching.",
            ),
            (
                MEI,
                "{pr} merged, autocomplete responses are 2 KB now, p95 on mobile 240 ms.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "subscription-pause",
        title: "Subscriptions: pause and resume",
        kind: Kind::Feature,
        team: Team::Billing,
        date: "2025-10-08",
        days: 45,
        owner: PRIYA,
        reporter: SOFIA,
        jira: true,
        desc: "Let subscribers pause their coffee subscription for 1 to 3 months instead of cancelling. Paused subscriptions skip renewals and resume automatically; the customer can resume early from the account page.",
        gh_issue: true,
        pr: Some((
            "Pause and resume for subscriptions",
            "Adds paused_until to subscriptions, skips renewal invoices while paused, a daily resume job, and the account page controls.",
        )),
        slack: &[
            (
                SOFIA,
                "30% of subscription cancellations give 'too much coffee' as the reason. A pause option should save a good part of those. Spec: {notion}",
            ),
            (
                PRIYA,
                "The invoice retry job and renewals need to skip paused subscriptions. I'll make that explicit in {jira}.",
            ),
            (
                PRIYA,
                "Pause and resume is live: {pr}. 212 pauses in the first week, cancellations down 18%.",
            ),
        ],
        notion: Some((
            "Subscription pause and resume spec",
            &[
                H("Problem"),
                P(
                    "Almost a third of subscription cancellations say they have too much coffee left. Many come back within three months, after paying a new signup discount.",
                ),
                H("Proposal"),
                L("Pause for 1, 2 or 3 months from the account page or the cancellation flow."),
                L(
                    "No renewal invoices while paused; the invoice retry job skips paused subscriptions.",
                ),
                L("Automatic resume with an email 5 days before the next shipment."),
                H("Success metric"),
                P("Cancellations down 15% within two months of launch."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "incident-cached-account-pages",
        title: "Incident 2025-10-21: CDN cached account pages served to other customers",
        kind: Kind::Incident,
        team: Team::Security,
        channel: Some("incidents"),
        date: "2025-10-21",
        days: 8,
        owner: RAVI,
        reporter: EMMA,
        jira: true,
        desc: "For 22 minutes the CDN cached the order confirmation page and served it to other customers, exposing names, shipping addresses and the last four card digits. A CDN rule change made /account/* cacheable because the response lacked Cache-Control: private.",
        gh_issue: true,
        pr: Some((
            "Mark every authenticated response private and no-store",
            "Middleware sets Cache-Control: private, no-store on any response for a logged-in session, and a CDN rule refuses to cache responses that set cookies.",
        )),
        slack: &[
            (
                EMMA,
                "URGENT: a customer says the order confirmation page showed someone else's name and address.",
            ),
            (
                RAVI,
                "Checking the CDN. A rule deployed at 09:40 made /account cacheable. Purging and rolling back now.",
            ),
            (
                RAVI,
                "Rolled back at 10:02, cache purged. 22 minutes of exposure. Treating it as a data breach, legal is informed. {jira}",
            ),
            (
                MARCUS,
                "We'll notify the 146 affected customers today. Ravi, please run the postmortem.",
            ),
            (
                RAVI,
                "Postmortem: {notion} Fix so this can't recur even with a bad CDN rule: {pr}",
            ),
        ],
        notion: Some((
            "Postmortem: cached account pages (2025-10-21)",
            &[
                H("Summary"),
                P(
                    "Between 09:40 and 10:02 UTC the CDN cached order confirmation pages and served them to other visitors. 146 customers' names, shipping addresses and the last four digits of their card were shown to at least one other visitor.",
                ),
                H("Root cause"),
                P(
                    "A CDN rule meant to cache static pages under /about was written with a wildcard that also matched /account. Our application did not send Cache-Control: private on authenticated pages, so nothing stopped the CDN from caching them.",
                ),
                H("Response"),
                L("Rule rolled back and cache purged at 10:02."),
                L(
                    "Affected customers notified the same day; the data protection authority informed within 72 hours.",
                ),
                H("Action items"),
                L("Every authenticated response is private and no-store (done)."),
                L("CDN changes need a second reviewer and a staging test."),
                L("The CDN refuses to cache responses with Set-Cookie."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "inventory-drift",
        title: "Inventory counts drift between warehouse and storefront",
        kind: Kind::Bug,
        team: Team::Data,
        date: "2025-11-03",
        days: 17,
        owner: LENA,
        reporter: SOFIA,
        jira: true,
        linear: true,
        desc: "The storefront shows products in stock that the warehouse has sold out, leading to about 30 cancelled orders a week. Stock updates from the warehouse arrive as deltas and some are lost when the consumer restarts; nothing reconciles full counts.",
        gh_issue: true,
        pr: Some((
            "Nightly full stock reconciliation with the warehouse",
            "Imports the warehouse's full stock snapshot every night, corrects drift, and reports the number of corrected SKUs. The delta consumer now commits offsets after applying updates.",
        )),
        slack: &[
            (
                SOFIA,
                "We cancelled 31 orders last week because the product was out of stock in the warehouse but shown in stock on the site. {jira}",
            ),
            (
                LENA,
                "The delta consumer commits offsets before applying them, so a restart loses updates. And there is no full reconciliation.",
            ),
            (
                LENA,
                "{pr}: offsets fixed and a nightly full reconciliation. Last night it corrected 214 SKUs.",
            ),
            (
                LENA,
                "One week later: 9 SKUs corrected per night on average, cancellations for stock reasons down to 3.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "incident-bf-queue",
        title: "Incident 2025-11-28: Black Friday checkout queue saturation",
        kind: Kind::Incident,
        team: Team::Checkout,
        channel: Some("incidents"),
        date: "2025-11-28",
        days: 6,
        owner: DIEGO,
        reporter: AISHA,
        jira: true,
        desc: "At 07:04 UTC on Black Friday the order processing queue backed up to 12,000 messages. Checkouts succeeded but confirmation emails and warehouse handoff were delayed by up to 40 minutes. The order worker autoscaler was capped at 10 replicas.",
        gh_issue: true,
        pr: Some((
            "Raise order worker autoscaling limits and scale on queue depth",
            "Scales the order worker on queue depth instead of CPU, with a maximum of 40 replicas.",
        )),
        slack: &[
            (
                AISHA,
                "Order queue at 12k and climbing. Checkout itself is fine. Order workers are at max replicas (10).",
            ),
            (
                DIEGO,
                "Raising the cap to 40 manually. CPU based scaling never triggered because the workers wait on the warehouse API.",
            ),
            (
                AISHA,
                "Queue drained by 07:51. Max delay for confirmation emails was 40 minutes. Great save everyone, and record sales: 4.2x last year.",
            ),
            (
                DIEGO,
                "Postmortem {notion}, ticket {jira}, and the autoscaling change {pr}",
            ),
        ],
        notion: Some((
            "Postmortem: Black Friday order queue (2025-11-28)",
            &[
                H("Summary"),
                P(
                    "At the Black Friday opening peak the order processing queue reached 12,000 messages. Checkout stayed up, but order confirmation emails and the handoff to the warehouse were delayed by up to 40 minutes.",
                ),
                H("Root cause"),
                P(
                    "The order worker scaled on CPU, but it spends most of its time waiting on the warehouse API, so CPU never crossed the threshold. The maximum of 10 replicas had not been revisited since 2023.",
                ),
                H("Action items"),
                L("Scale on queue depth, up to 40 replicas (done)."),
                L("Include the order queue in the Black Friday load test next year."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "support-delayed-shipments",
        title: "Support macro for delayed shipments",
        kind: Kind::Task,
        team: Team::Support,
        date: "2025-12-10",
        days: 5,
        owner: EMMA,
        reporter: EMMA,
        jira: true,
        desc: "The carrier strike in December delays shipments to France and Belgium by up to a week. Create a macro and a status banner text so the support team answers consistently.",
        slack: &[
            (
                EMMA,
                "Carrier strike in France and Belgium, expect delays of a week. I wrote a playbook with the macro text: {notion}",
            ),
            (
                SOFIA,
                "Can we also show a banner on order pages for FR and BE addresses?",
            ),
            (HANNAH, "Banner is live for FR and BE shipping addresses."),
        ],
        notion: Some((
            "Support playbook: delayed shipments",
            &[
                H("When to use"),
                P(
                    "Use this playbook whenever a carrier announces delays longer than two days for a country or region.",
                ),
                H("Macro text"),
                P(
                    "Thanks for your patience. Our carrier is currently experiencing delays in your area, and your parcel may arrive up to a week later than planned. It is on its way and you do not need to do anything. If it has not arrived within 10 days, reply to this email and we will send a replacement or refund you.",
                ),
                H("Escalation"),
                L(
                    "Orders older than 10 days: offer a replacement or a refund, no approval needed.",
                ),
                L("Perishable products (coffee subscriptions): refund immediately."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "roadmap-2026",
        title: "2026 engineering roadmap",
        kind: Kind::Doc,
        team: Team::Company,
        date: "2026-01-13",
        days: 25,
        owner: MARCUS,
        reporter: MARCUS,
        slack: &[
            (
                MARCUS,
                "Here is the 2026 engineering roadmap, draft for comments until the end of the month: {notion}",
            ),
            (
                PRIYA,
                "For billing the big item is seller payouts if the marketplace goes ahead. Happy to lead the design.",
            ),
            (
                AISHA,
                "Please keep the reliability budget in: 20% of each team's time on reliability and tech debt.",
            ),
            (
                MARCUS,
                "Final version of the 2026 roadmap is published. Reliability budget stays at 20%.",
            ),
        ],
        notion: Some((
            "2026 engineering roadmap",
            &[
                H("Themes"),
                L(
                    "Marketplace: let third-party sellers list products, with payouts via Stripe Connect (H2).",
                ),
                L("Loyalty: points program for repeat customers (Q2)."),
                L("Speed: p95 page load under 1.5 s on mobile."),
                L(
                    "Reliability: 20% of each team's time, no incident repeats with the same root cause.",
                ),
                H("Team changes"),
                P(
                    "Platform grows by two engineers to own Kubernetes and the data pipelines. Search and checkout stay as they are.",
                ),
                H("Not doing in 2026"),
                P(
                    "No native desktop app, no new countries before the marketplace launch, no rewrite of the monolith.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "flaky-e2e",
        title: "Flaky end-to-end tests in CI block merges",
        kind: Kind::Task,
        team: Team::Platform,
        date: "2026-01-22",
        days: 16,
        owner: YUKI,
        reporter: DIEGO,
        linear: true,
        desc: "About one in five CI runs on main fails in the end-to-end suite and passes on retry. The worst offenders are the checkout tests, which wait for fixed timeouts instead of network idle, and tests that share a seeded customer.",
        gh_issue: false,
        pr: Some((
            "Stabilise checkout end-to-end tests",
            "Replaces fixed sleeps with waits on network responses, gives every test its own customer, and quarantines tests that fail more than twice a week.",
        )),
        slack: &[
            (
                DIEGO,
                "Third retry of CI today for a one-line change. The end-to-end suite is flaky again. {linear}",
            ),
            (
                YUKI,
                "I'll take it. The checkout tests use fixed 2 s sleeps and share one test customer.",
            ),
            (
                YUKI,
                "{pr}: flake rate on main went from 19% to 2% over the last week.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "uk-postcode",
        title: "Address autocomplete picks the wrong postcode in the UK",
        kind: Kind::Bug,
        team: Team::Checkout,
        date: "2026-02-04",
        days: 9,
        owner: DIEGO,
        reporter: EMMA,
        jira: true,
        desc: "For UK addresses with several delivery points on one street, the address autocomplete fills in the postcode of the first suggestion instead of the selected one. Parcels go back to the warehouse as undeliverable.",
        gh_issue: true,
        pr: Some((
            "Use the selected suggestion's postcode in UK address autocomplete",
            "The autocomplete handler looked up the postcode by street name; it now uses the id of the chosen suggestion.",
        )),
        slack: &[
            (
                EMMA,
                "Several UK parcels came back as undeliverable, the postcode on the label doesn't match the address. All used address autocomplete.",
            ),
            (
                DIEGO,
                "Found it, we look up the postcode by street, not by the selected suggestion. {jira} {pr}",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "image-worker",
        title: "Move image resizing to a background worker",
        kind: Kind::Feature,
        team: Team::Platform,
        date: "2026-02-17",
        days: 28,
        owner: TOMAS,
        reporter: TOMAS,
        linear: true,
        desc: "Product image resizing happens in the request when a seller uploads a photo, and large uploads time out. Move resizing to a queue-backed worker that produces all sizes ahead of time.",
        gh_issue: true,
        pr: Some((
            "Background image resizing worker",
            "Uploads are stored as originals and a job produces the 6 standard sizes in WebP and AVIF. The product page shows a placeholder until the sizes exist.",
        )),
        slack: &[
            (
                TOMAS,
                "Design for moving image resizing to a background worker: {notion} Needed before marketplace sellers start uploading.",
            ),
            (
                HANNAH,
                "Can we add AVIF while we're at it? Saves another 30% on product pages.",
            ),
            (
                TOMAS,
                "Yes, WebP and AVIF. {pr} is merged, upload timeouts are gone.",
            ),
        ],
        notion: Some((
            "Design: image resizing worker",
            &[
                H("Context"),
                P(
                    "Resizing runs synchronously in the upload request. Photos above 20 MB time out, and marketplace sellers will upload thousands of images.",
                ),
                H("Design"),
                P(
                    "The upload endpoint stores the original in object storage and enqueues a resize job. Workers produce six sizes in WebP and AVIF and write them next to the original. The product page uses a blurred placeholder until the sizes exist.",
                ),
                H("Capacity"),
                L("One worker resizes about 15 images per second."),
                L("Autoscale on queue depth, 2 to 20 workers."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "gdpr-export-notes",
        title: "GDPR data export misses order notes",
        kind: Kind::Bug,
        team: Team::Security,
        date: "2026-03-03",
        days: 8,
        owner: RAVI,
        reporter: EMMA,
        jira: true,
        desc: "The personal data export that customers can request under GDPR does not include order notes and gift messages, which can contain personal data. Add them and list every table the export covers in the privacy documentation.",
        gh_issue: true,
        pr: Some((
            "Include order notes and gift messages in the GDPR export",
            "Adds order notes and gift messages to the export and a test that fails when a new column tagged as personal data is not exported.",
        )),
        slack: &[
            (
                EMMA,
                "A customer's GDPR export request came back without her gift messages, and she is asking why. Are we missing data? {jira}",
            ),
            (
                RAVI,
                "Yes, notes and gift messages are not exported. Fixing it and adding a check for new personal data columns. {pr}",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "incident-status-cert",
        title: "Incident 2026-03-17: expired TLS certificate on the status page",
        kind: Kind::Incident,
        team: Team::Platform,
        channel: Some("incidents"),
        date: "2026-03-17",
        days: 3,
        owner: AISHA,
        reporter: EMMA,
        jira: true,
        desc: "The certificate of status.acme-shop.example expired; browsers showed a security warning on the status page for 5 hours. It was the only certificate still renewed by hand.",
        pr: Some((
            "Automate the status page certificate with cert-manager",
            "Moves the status page to the shared ingress so cert-manager renews its certificate, and adds an expiry alert for every certificate 21 days ahead.",
        )),
        slack: &[
            (
                EMMA,
                "Customers say our status page shows a security warning.",
            ),
            (
                AISHA,
                "Its certificate expired this morning. It was the last one renewed manually. Renewing now.",
            ),
            (
                AISHA,
                "Fixed. Postmortem {notion}. Follow-up {jira}: {pr} moves it to cert-manager and adds expiry alerts.",
            ),
        ],
        notion: Some((
            "Postmortem: expired status page certificate (2026-03-17)",
            &[
                H("Summary"),
                P(
                    "The TLS certificate of the status page expired at 04:00 UTC and was renewed at 09:10 UTC. Visitors saw a browser security warning. No other systems were affected.",
                ),
                H("Action items"),
                L("All certificates renewed by cert-manager (done)."),
                L("Alert 21 days before any certificate expires (done)."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "loyalty-points",
        title: "Loyalty points program",
        kind: Kind::Feature,
        team: Team::Growth,
        date: "2026-04-01",
        days: 70,
        owner: HANNAH,
        reporter: SOFIA,
        jira: true,
        linear: true,
        desc: "Customers earn 1 point per euro spent and redeem 100 points for a 5 euro voucher. Points expire after 12 months. Points are granted when an order is delivered, not when it is paid, and removed on refund.",
        gh_issue: true,
        pr: Some((
            "Loyalty points ledger and redemption at checkout",
            "Adds a points ledger (append-only), grants points on delivery events, reverses them on refunds, and a redemption step at checkout that creates a single-use voucher.",
        )),
        slack: &[
            (
                SOFIA,
                "Loyalty points spec is final: {notion} Launch target is mid June. {jira}",
            ),
            (
                PRIYA,
                "Refunds must reverse points, and partial refunds proportionally. Otherwise people will game it.",
            ),
            (
                HANNAH,
                "Ledger is append-only so reversals are just negative entries. Engineering breakdown in {linear}.",
            ),
            (
                HANNAH,
                "{pr} is merged behind the loyalty flag. Pilot with 2,000 customers starts Monday.",
            ),
            (
                SOFIA,
                "Loyalty points are live for everyone. 18% of returning customers redeemed a voucher in the first month.",
            ),
        ],
        notion: Some((
            "Loyalty points program spec",
            &[
                H("Rules"),
                L("1 point per euro spent on products, shipping excluded."),
                L("100 points = 5 euro voucher, redeemable at checkout."),
                L("Points are granted on delivery and expire after 12 months."),
                L("Refunds remove points, partial refunds proportionally."),
                H("Why"),
                P(
                    "Repeat purchase rate is 22% within 6 months; the goal is 27%. A simple points program was the most wanted feature in the customer survey after Apple Pay.",
                ),
                H("Launch"),
                P(
                    "Pilot with 2,000 customers for four weeks, then everyone. Support gets an admin view of a customer's points ledger.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "k8s-autoscaling",
        title: "Kubernetes node pool autoscaling too slow during sales",
        kind: Kind::Task,
        team: Team::Platform,
        date: "2026-04-21",
        days: 20,
        owner: TOMAS,
        reporter: AISHA,
        linear: true,
        desc: "During the spring sale, pods waited up to 6 minutes for new nodes. The cluster autoscaler adds nodes one at a time and the node image pulls 4 GB of images on boot. Add warm spare capacity and pre-pulled images.",
        pr: Some((
            "Overprovision the general node pool and pre-pull images",
            "Adds low-priority placeholder pods worth 3 nodes of spare capacity and bakes the top 10 images into the node image.",
        )),
        slack: &[
            (
                AISHA,
                "Spring sale: pods pending for up to 6 minutes waiting for nodes. Checkout was fine because it had headroom, search wasn't. {linear}",
            ),
            (
                TOMAS,
                "New nodes need 4 minutes just to pull images. I'll bake the big images into the node image and add overprovisioning.",
            ),
            (
                TOMAS,
                "{pr}: scale-up time from 6 min to under 1 min in the test.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "ios-push",
        title: "Mobile push notifications not delivered on iOS 19",
        kind: Kind::Bug,
        team: Team::Mobile,
        date: "2026-05-12",
        days: 7,
        owner: KWAME,
        reporter: KWAME,
        linear: true,
        desc: "Shipping notifications stopped arriving on iPhones running iOS 19. The push provider returns BadDeviceToken for tokens registered since the update, because the app registers with the sandbox APNs environment in release builds.",
        gh_issue: true,
        pr: Some((
            "Register push tokens with the production APNs environment",
            "Fixes the aps-environment entitlement in the release configuration and re-registers tokens on the next app start.",
        )),
        slack: &[
            (
                KWAME,
                "Delivery rate of push notifications on iOS dropped to 60%. All failures BadDeviceToken, all iOS 19. {linear}",
            ),
            (
                KWAME,
                "The release build has the development aps-environment entitlement since the Xcode upgrade. {pr}",
            ),
            (KWAME, "3.21.0 is out, iOS push delivery back to 97%."),
        ],
        ..BASE
    },
    Story {
        slug: "marketplace-launch-plan",
        title: "Q3 2026 launch plan: marketplace sellers",
        kind: Kind::Doc,
        team: Team::Product,
        date: "2026-06-02",
        days: 45,
        owner: SOFIA,
        reporter: SOFIA,
        jira: true,
        desc: "Epic for the marketplace launch in Q3 2026: seller onboarding, product listing by sellers, payouts with Stripe Connect, and support processes for seller disputes.",
        slack: &[
            (
                SOFIA,
                "The Q3 2026 launch plan for marketplace sellers is ready for review: {notion} Epic in Jira: {jira}",
            ),
            (
                PRIYA,
                "Payouts are the riskiest part. Let's have the Stripe Connect design reviewed by finance before we commit to the date.",
            ),
            (
                EMMA,
                "Support will need a separate queue for seller disputes. Can we get that into the plan?",
            ),
            (
                SOFIA,
                "Updated: seller support queue added, launch date 15 September pending the payouts review.",
            ),
        ],
        notion: Some((
            "Q3 2026 launch plan: marketplace sellers",
            &[
                H("What we launch"),
                P(
                    "Selected third-party sellers can list coffee equipment and accessories on the shop. Acme handles checkout and customer service; sellers ship the orders and receive payouts twice a month.",
                ),
                H("Milestones"),
                L("July: seller onboarding and product listing for 10 pilot sellers."),
                L("August: payouts via Stripe Connect, seller dashboard."),
                L("15 September: public launch with 40 sellers."),
                H("Open questions"),
                L("Who pays for returns of seller products?"),
                L("Do sellers see the customer's email address? Security says no."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "invoice-pdf-blank",
        title: "Invoice PDFs render blank for long company names",
        kind: Kind::Bug,
        team: Team::Billing,
        date: "2026-06-23",
        days: 6,
        owner: PRIYA,
        reporter: EMMA,
        jira: true,
        desc: "Business customers with company names longer than 60 characters get a blank invoice PDF. The PDF renderer fails on the overflowing header table and the error is swallowed.",
        gh_issue: true,
        pr: Some((
            "Wrap long company names on invoice PDFs",
            "The header table wraps long names over two lines, and rendering errors now fail the job loudly instead of producing an empty file.",
        )),
        slack: &[
            (
                EMMA,
                "Two business customers got empty invoice PDFs. Both have very long company names, one is 'Kaffeerösterei und Feinkost Müller-Lüdenscheidt GmbH & Co. KG'.",
            ),
            (
                PRIYA,
                "The invoice renderer crashes on overflow and we write an empty file. {jira} {pr}",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "incident-redis-logout",
        title: "Incident 2026-07-14: Redis failover logged out all users",
        kind: Kind::Incident,
        team: Team::Platform,
        channel: Some("incidents"),
        date: "2026-07-14",
        days: 9,
        owner: AISHA,
        reporter: AISHA,
        jira: true,
        desc: "A planned Redis maintenance failover promoted a replica that had not finished its initial sync. All sessions were lost and every customer was logged out; carts of logged-in customers were emptied.",
        gh_issue: true,
        pr: Some((
            "Persist carts in Postgres and keep only sessions in Redis",
            "Carts are stored in Postgres so a session store loss no longer empties them, and the failover script waits for replica sync before promoting.",
        )),
        slack: &[
            (
                AISHA,
                "All customers logged out at 08:03, carts empty. Redis failover during maintenance promoted an unsynced replica.",
            ),
            (
                EMMA,
                "Lots of tickets about empty carts. What should we tell people?",
            ),
            (
                AISHA,
                "Tell them to log in again, carts can't be restored, sorry. Sending a 10% voucher to customers who lost a cart, marketing agreed.",
            ),
            (
                AISHA,
                "Postmortem: {notion} Carts move to Postgres so this can't empty them again: {jira} {pr}",
            ),
        ],
        notion: Some((
            "Postmortem: Redis failover logged out all users (2026-07-14)",
            &[
                H("Summary"),
                P(
                    "At 08:03 UTC a planned failover promoted a Redis replica that was still in its initial sync. Sessions and carts lived only in Redis, so every customer was logged out and 5,800 carts were lost.",
                ),
                H("Root cause"),
                P(
                    "The failover script did not check replica sync state. Carts were treated as cache data although they are business data.",
                ),
                H("Action items"),
                L("Carts stored in Postgres (done)."),
                L(
                    "Failover waits for master_link_status up and zero replication offset lag (done).",
                ),
                L("Maintenance failovers at 03:00 UTC only."),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "search-out-of-stock",
        title: "Search ranking boosts out-of-stock products",
        kind: Kind::Bug,
        team: Team::Search,
        date: "2026-08-05",
        days: 10,
        owner: MEI,
        reporter: SOFIA,
        linear: true,
        desc: "Popular products that are sold out rank first in search because the popularity boost uses sales from the last 30 days. Out-of-stock products should rank below available ones.",
        gh_issue: true,
        pr: Some((
            "Demote out-of-stock products in search ranking",
            "Adds an availability factor to the ranking function (0.2 for out of stock) and indexes stock status incrementally.",
        )),
        slack: &[
            (
                SOFIA,
                "Search for 'espresso machine' shows three sold-out machines first. Conversion on that query dropped by half. {linear}",
            ),
            (
                MEI,
                "The popularity boost loves sold-out bestsellers. I'll add an availability factor. {pr}",
            ),
            (
                MEI,
                "Deployed, conversion on the top 100 queries up 7% week over week.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "stripe-connect-payouts",
        title: "Seller payouts via Stripe Connect",
        kind: Kind::Feature,
        team: Team::Payments,
        date: "2026-08-26",
        days: 50,
        owner: JONAS,
        reporter: PRIYA,
        jira: true,
        linear: true,
        desc: "Pay marketplace sellers twice a month with Stripe Connect Express accounts: collect the full order amount, keep the commission, and transfer the seller's share after the return window closes.",
        gh_issue: true,
        pr: Some((
            "Stripe Connect Express onboarding and scheduled seller payouts",
            "Adds seller onboarding via Connect Express, records the seller share per order line, and a payout job on the 1st and 15th that transfers balances older than the 14-day return window.",
        )),
        slack: &[
            (
                JONAS,
                "Design for seller payouts with Stripe Connect: {notion} Finance reviewed it yesterday. {jira}",
            ),
            (
                PRIYA,
                "Refunds after a payout: we claw back from the next payout, and if the balance is negative we debit the seller's account. Agreed with finance.",
            ),
            (
                JONAS,
                "First test payouts to the 10 pilot sellers went out. {pr}",
            ),
            (SOFIA, "Payouts are live for all 40 sellers."),
        ],
        notion: Some((
            "Design: seller payouts with Stripe Connect",
            &[
                H("Money flow"),
                P(
                    "Customers pay Acme for the whole order. Acme keeps a 15% commission and owes each seller the rest of their order lines. After the 14-day return window, the seller's share becomes payable and is transferred to their Connect Express account on the next payout date.",
                ),
                H("Payout schedule"),
                L("Payout job on the 1st and 15th of each month."),
                L("Minimum payout 20 euros; smaller balances roll over."),
                H("Refunds and disputes"),
                P(
                    "A refund after a payout is deducted from the seller's next payout. A negative balance older than 30 days is debited from the seller's bank account, as allowed by the seller agreement.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "long-address-checkout",
        title: "Checkout fails for addresses longer than 100 characters",
        kind: Kind::Bug,
        team: Team::Checkout,
        date: "2026-09-15",
        days: 5,
        owner: YUKI,
        reporter: EMMA,
        jira: true,
        desc: "Placing an order fails with a generic error when the street address is longer than 100 characters. The carrier label API rejects it, and the error is shown as 'Something went wrong'.",
        gh_issue: true,
        pr: Some((
            "Validate address length and split long street lines",
            "Street lines longer than the carrier limit are split into address lines 1 and 2; the form shows a clear message when even that is too long.",
        )),
        slack: &[
            (
                EMMA,
                "Customer in Wales can't check out, the address is really long (farm name plus street). Error just says something went wrong. {jira}",
            ),
            (
                YUKI,
                "Carrier label API limit is 100 characters per line. Splitting into two lines: {pr}",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "a11y-audit-checkout",
        title: "Accessibility audit of the checkout flow",
        kind: Kind::Task,
        team: Team::Checkout,
        date: "2026-10-06",
        days: 40,
        open: true,
        owner: HANNAH,
        reporter: SOFIA,
        jira: true,
        desc: "The European Accessibility Act applies to online shops. An external audit of checkout against WCAG 2.2 AA found 14 issues: missing form labels, focus lost after errors, and low contrast on the payment buttons. Fix all critical and serious issues.",
        gh_issue: true,
        pr: Some((
            "Accessible error handling in checkout forms",
            "Associates error messages with inputs via aria-describedby, moves focus to the first invalid field, and raises the contrast of the payment buttons. Part of the audit fixes, 9 of 14 issues.",
        )),
        slack: &[
            (
                SOFIA,
                "The accessibility audit report for checkout is in: 14 issues, 4 critical. Summary and plan: {notion} {jira}",
            ),
            (
                HANNAH,
                "Critical ones first: focus handling after validation errors and missing labels on the card form.",
            ),
            (
                HANNAH,
                "First batch of fixes: {pr}. 9 of 14 done, the remaining ones need design changes.",
            ),
        ],
        notion: Some((
            "Accessibility audit: checkout (WCAG 2.2)",
            &[
                H("Results"),
                P(
                    "The external audit tested checkout with screen readers (NVDA, VoiceOver) and keyboard only. 14 issues: 4 critical, 6 serious, 4 moderate.",
                ),
                H("Critical issues"),
                L(
                    "Focus is lost after a validation error; screen reader users do not hear the error.",
                ),
                L("Card number, expiry and CVC fields have no accessible labels."),
                L("The address autocomplete list cannot be used with a keyboard."),
                L("Payment buttons have a contrast ratio of 2.9:1."),
                H("Plan"),
                P(
                    "Critical and serious issues fixed by the end of November, moderate ones in Q1 2027. A new automated axe check runs on every checkout pull request.",
                ),
            ],
        )),
        ..BASE
    },
    Story {
        slug: "invoice-retry-dst",
        title: "Invoice retry job skips invoices after the DST change",
        kind: Kind::Bug,
        team: Team::Billing,
        date: "2026-10-27",
        days: 20,
        open: true,
        owner: PRIYA,
        reporter: LENA,
        jira: true,
        desc: "After the switch from summer time on 25 October, the invoice retry job skipped every invoice whose retry was scheduled between 02:00 and 03:00 Europe/Berlin. The job computes the next window in local time and the repeated hour makes the window empty.",
        gh_issue: true,
        pr: Some((
            "Schedule invoice retries in UTC",
            "Stores and compares retry times in UTC. Draft: still needs a backfill of the 96 skipped invoices.",
        )),
        slack: &[
            (
                LENA,
                "Reconciliation report: 96 open invoices were never retried around the DST change on Sunday.",
            ),
            (
                PRIYA,
                "The invoice retry job again. It builds its window in Europe/Berlin local time, and the repeated hour produced an empty window. {jira}",
            ),
            (
                PRIYA,
                "Draft PR moves everything to UTC: {pr}. I'll retry the 96 invoices by hand today.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "checkout-bundles-timeout",
        title: "Checkout times out for carts with bundles",
        kind: Kind::Bug,
        team: Team::Checkout,
        date: "2026-11-10",
        days: 9,
        open: true,
        owner: DIEGO,
        reporter: EMMA,
        linear: true,
        desc: "Carts with product bundles (for example the espresso starter kit with 8 components) hit the checkout timeout at the payment step. Bundles are expanded into components after the batch inventory reservation, and each component is reserved individually again.",
        gh_issue: true,
        slack: &[
            (
                EMMA,
                "Checkout timeouts are back: customers with the espresso starter kit bundle in the cart can't pay, the payment step times out.",
            ),
            (
                DIEGO,
                "Looks like the old more-than-50-items problem: bundle components bypass the batch reservation. {linear} {issue}",
            ),
            (
                YUKI,
                "I can pair on it tomorrow, I wrote the bundle expansion.",
            ),
        ],
        ..BASE
    },
    Story {
        slug: "incident-search-disk",
        title: "Incident 2026-11-18: search cluster out of disk",
        kind: Kind::Incident,
        team: Team::Search,
        channel: Some("incidents"),
        date: "2026-11-18",
        days: 2,
        open: true,
        owner: MEI,
        reporter: AISHA,
        jira: true,
        desc: "Two search data nodes reached the disk flood-stage watermark and the cluster made the product index read-only. New products and price changes stopped appearing in search for 2 hours. Old indices from the nightly reindex were not deleted.",
        slack: &[
            (
                AISHA,
                "Search cluster at flood stage on two nodes, product index is read-only. Prices in search are stale.",
            ),
            (
                MEI,
                "Old products-YYYYMMDD indices from the nightly reindex were never deleted, 23 of them. Deleting all but the last two.",
            ),
            (
                MEI,
                "Index writable again, incremental updates caught up. Writing the postmortem: {notion} Ticket {jira}.",
            ),
        ],
        notion: Some((
            "Postmortem: search cluster out of disk (2026-11-18)",
            &[
                H("Summary"),
                P(
                    "Draft. Two data nodes of the search cluster reached the flood-stage disk watermark at 13:20 UTC and the product index became read-only for about two hours. Searches kept working but showed stale prices and stock.",
                ),
                H("Root cause"),
                P(
                    "The nightly reindex creates a new index every night and swaps the alias, but the cleanup step that deletes old indices had been failing silently since the reindex was parallelised.",
                ),
                H("Action items"),
                L(
                    "Keep the last two indices and delete older ones in the reindex job, failing loudly on errors.",
                ),
                L("Alert at 75% disk on search data nodes."),
            ],
        )),
        ..BASE
    },
];

/// Slack messages that belong to no story: (UTC time `YYYY-MM-DDTHH:MM`, channel, author, text).
pub(crate) static CHATTER: &[(&str, &str, usize, &str)] = &[
    (
        "2025-01-10T08:55",
        "general",
        MARCUS,
        "Welcome to the new Slack workspace everyone! Channels for each team are set up, #incidents is for anything customer-facing that is broken.",
    ),
    (
        "2025-01-29T12:10",
        "eng-checkout",
        YUKI,
        "Staging checkout is broken, payment step returns 500. Did anyone change the Stripe test keys?",
    ),
    (
        "2025-01-29T12:31",
        "eng-checkout",
        DIEGO,
        "That was me, rotated the test keys and forgot staging. Fixed now, sorry.",
    ),
    (
        "2025-02-14T16:00",
        "general",
        SOFIA,
        "Valentine's Day campaign results: 2.3x normal revenue on the gift sets, thanks everyone who helped with the landing page.",
    ),
    (
        "2025-03-06T09:20",
        "platform",
        TOMAS,
        "Planned maintenance tonight 22:00 UTC: Kubernetes control plane upgrade to 1.31, no downtime expected.",
    ),
    (
        "2025-04-17T10:05",
        "billing-eng",
        PRIYA,
        "Finance asked for the monthly revenue export by Friday. Lena, can you run the usual report?",
    ),
    (
        "2025-04-17T10:40",
        "billing-eng",
        LENA,
        "Sure, I'll send the revenue export Thursday afternoon.",
    ),
    (
        "2025-05-20T14:45",
        "general",
        MARCUS,
        "Reminder: engineering all-hands on Thursday at 16:00 CEST. Agenda: Q2 results, Q3 planning, on-call changes.",
    ),
    (
        "2025-06-11T11:11",
        "search-eng",
        MEI,
        "Experiment: synonyms for grinder and mill in search. Let's see if the zero result rate for grinder queries goes down.",
    ),
    (
        "2025-06-30T09:00",
        "growth",
        HANNAH,
        "The new newsletter signup form converts 14% better than the old popup. Rolling it out to all pages.",
    ),
    (
        "2025-08-01T08:30",
        "general",
        EMMA,
        "Support is short-staffed next week because of holidays, expect slower answers in #support-escalations.",
    ),
    (
        "2025-09-02T15:15",
        "mobile",
        KWAME,
        "App store rating went from 4.3 to 4.6 since the order history fixes. Nice work everyone.",
    ),
    (
        "2025-10-01T10:00",
        "payments",
        JONAS,
        "Stripe is raising the fee for Amex transactions from November. Finance is aware.",
    ),
    (
        "2025-10-15T13:25",
        "data-eng",
        LENA,
        "The analytics warehouse now refreshes every hour instead of every night. Dashboards in Metabase are updated.",
    ),
    (
        "2025-12-19T17:00",
        "general",
        MARCUS,
        "Deploy freeze starts tomorrow until 2 January. Happy holidays, and thanks for a great year!",
    ),
    (
        "2026-02-25T09:45",
        "security",
        RAVI,
        "Phishing test results: 7% clicked the link, down from 19% last year. Training for the others next week.",
    ),
    (
        "2026-04-08T11:30",
        "eng-checkout",
        DIEGO,
        "Checkout conversion on mobile is up 11% since January. The address autocomplete fix and Apple Pay both helped.",
    ),
    (
        "2026-05-27T16:20",
        "platform",
        AISHA,
        "Kubernetes 1.33 upgrade done on production, no issues. Staging follows tomorrow.",
    ),
    (
        "2026-06-16T10:10",
        "product",
        SOFIA,
        "Customer survey results are in the product channel folder: delivery speed is the top complaint, then search quality.",
    ),
    (
        "2026-08-12T09:05",
        "search-eng",
        MEI,
        "Zero-result rate for search is down to 3.1% after the synonym and spelling work.",
    ),
    (
        "2026-09-16T08:00",
        "general",
        SOFIA,
        "The marketplace is live! 40 sellers, 1,900 new products. Thank you all.",
    ),
    (
        "2026-10-20T14:00",
        "billing-eng",
        PRIYA,
        "Reminder: clocks go back on Sunday 25 October. Please don't deploy billing changes over the weekend.",
    ),
    (
        "2026-11-03T09:30",
        "general",
        AISHA,
        "Black Friday 2026 readiness starts now. Same process as last year, first load test next Tuesday.",
    ),
    (
        "2026-11-12T12:00",
        "eng-checkout",
        YUKI,
        "Load test at 8x passed for checkout, including carts with 150 items.",
    ),
];
