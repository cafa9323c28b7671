// tests/browser/dashboard.mjs — drive the system Chromium through the
// dashboard as a person would (run by tests/integration/t_dashboard.sh):
//
//   node dashboard.mjs BASE_URL SHOT_DIR PAYLOAD SELECT_IDS FILTER_KIND
//
// opens the overview, follows "Failed", opens the first selected dead task
// and checks its payload is shown as text, retries the selected tasks in
// bulk, retries every dead task of FILTER_KIND by filter, and checks the
// pages say so. Any alert() (a script injected from the database) fails.
// Screenshots at laptop and phone width go to SHOT_DIR. Prints one JSON
// line with what it saw; exits non-zero on the first failed check.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [base, shots, payload, idList, filterKind] = process.argv.slice(2);
const ids = idList.split(",");
const laptop = { width: 1366, height: 860 };
const phone = { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

function check(cond, what) {
	if (!cond) {
		console.error("FAIL: " + what);
		process.exit(1);
	}
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "sked-chromium-"));
const browser = await puppeteer.launch({
	executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
	headless: true,
	args: [
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile,
	],
});
const seen = {};
try {
	const page = await browser.newPage();
	page.setDefaultTimeout(15000);
	let alerts = 0;
	page.on("dialog", async (d) => {
		if (d.type() === "confirm") {
			await d.accept(); // the bulk-by-filter confirmation
		} else {
			alerts++;
			await d.dismiss();
		}
	});
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });

	const shoot = async (name) => {
		for (const [label, vp] of [["laptop", laptop], ["phone", phone]]) {
			await page.setViewport(vp);
			await page.screenshot({ path: path.join(shots, `${name}-${label}.png`), fullPage: true });
		}
		await page.setViewport(laptop);
	};
	const go = async (click) => {
		await Promise.all([page.waitForNavigation({ waitUntil: "load" }), click()]);
	};

	await page.setViewport(laptop);
	await page.goto(base + "/", { waitUntil: "load" });
	check((await page.title()).startsWith("Overview"), "the overview's title");
	const cards = await page.$$eval(".card .label", (els) => els.map((e) => e.textContent));
	check(cards.includes("Dead") && cards.includes("Nodes alive"), "the overview's cards: " + cards);
	check(await page.$(".chart svg rect.ok"), "the throughput chart shows succeeded attempts");
	await shoot("overview");

	// one click to the failed tasks
	await go(() => page.click("header nav a[href='/failed']"));
	const rows = await page.$$eval("tbody tr td:nth-child(2) a", (els) => els.map((e) => e.textContent));
	for (const id of ids)
		check(rows.includes(id), `task ${id} listed as dead (rows: ${rows})`);
	const kinds = await page.$$eval("tbody tr td:nth-child(3)", (els) => els.map((e) => e.textContent));
	check(kinds.some((k) => k.includes("<script>")), "a kind holding <script> is shown as text");
	await shoot("failed");

	// follow a dead task
	await go(() => page.click(`tbody a[href='/task/${ids[0]}']`));
	const shown = await page.$eval("#payload", (e) => e.textContent);
	check(shown === payload, `the payload is shown as text (got ${JSON.stringify(shown)})`);
	check((await page.$$("tbody tr")).length >= 1, "the task's attempts are listed");
	await shoot("task");

	// bulk retry by selection
	await page.goto(base + "/failed", { waitUntil: "load" });
	for (const id of ids)
		await page.click(`input[name=id][value='${id}']`);
	await go(() => page.click("#retry-selected"));
	const flash1 = await page.$eval("#flash", (e) => e.textContent);
	check(flash1 === `Retried ${ids.length} task(s).`, "the flash after a bulk retry: " + flash1);
	const after = await page.$$eval("tbody tr td:nth-child(2) a", (els) => els.map((e) => e.textContent));
	for (const id of ids)
		check(!after.includes(id), `task ${id} is no longer listed as dead`);
	await shoot("retried");
	await page.goto(base + `/task/${ids[0]}`, { waitUntil: "load" });
	const pillText = await page.$eval("h1 .pill", (e) => e.textContent);
	check(pillText === "pending", "the retried task shows as pending: " + pillText);

	// bulk retry by filter: every dead task of one kind
	await page.goto(base + `/failed?status=dead&kind=${encodeURIComponent(filterKind)}`, { waitUntil: "load" });
	await go(() => page.click("#bulk-filter"));
	const flash2 = await page.$eval("#flash", (e) => e.textContent);
	seen.filterRetried = Number((flash2.match(/Retried (\d+)/) || [])[1]);
	check(seen.filterRetried > 0, "the flash after a retry by filter: " + flash2);

	// the other pages, for the record
	for (const name of ["nodes", "schedules", "locks"]) {
		await go(() => page.click(`header nav a[href='/${name}']`));
		check((await page.title()).toLowerCase().startsWith(name), `the ${name} page`);
		await shoot(name);
	}

	check(alerts === 0, `no script from the database ran (${alerts} alert(s))`);
	check(errors.length === 0, "no errors in the page's console: " + errors.join("; "));
	seen.ok = true;
	console.log(JSON.stringify(seen));
} finally {
	await browser.close();
	fs.rmSync(profile, { recursive: true, force: true });
}
