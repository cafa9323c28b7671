// tests/browser/dashboard.mjs — drive the system Chromium through the
// dashboard as a person would (run by tests/integration/t_dashboard.sh):
//
//   node dashboard.mjs BASE_URL SHOT_DIR PAYLOAD SELECT_IDS FILTER_KIND GRAPH
//
// opens the overview, follows "Failed", opens the first selected dead task
// and checks its payload is shown as text, retries the selected tasks in
// bulk, retries every dead task of FILTER_KIND by filter, and checks the
// pages say so. Any alert() (a script injected from the database) fails.
// At phone width, the task page's errors and the schedules' buttons must
// lie on screen; in the light and the dark scheme every link must have a
// contrast of 4.5:1 at least (WCAG AA) against what is behind it.
// A task's page draws its workflow (GRAPH, JSON: the tasks a, b, c, d
// of a 3-layer graph, fanin with more parents than the picture holds):
// the right boxes in the right layers, the edges, a colour per status
// (the status pills' colours), links to each task, "N more" past the
// bound. The open page of a running task follows it to its end without
// navigating (a marker on window survives), the graph too; a list keeps
// its ticked boxes through an update; paused, or hidden behind another
// tab, a page asks the server for nothing, and shown again it asks at
// once.
// Screenshots at laptop and phone width go to SHOT_DIR. Prints one JSON
// line with what it saw; exits non-zero on the first failed check.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [base, shots, payload, idList, filterKind, graphArg] = process.argv.slice(2);
const ids = idList.split(",");
// the workflow: a (running until release is created), b and c after a
// (c waiting to retry), d after b and c; fanin: a child of fan parents
const wf = JSON.parse(graphArg);
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
	// at phone width, what a person must reach lies within the screen's
	// width: cells of a table column by its heading (a table too wide
	// for a phone once hid them off screen, to the right), buttons in a
	// table, a field of the task page
	const offScreenAtPhone = async (what) => {
		await page.setViewport(phone);
		const off = await page.evaluate((what) => {
			const w = document.documentElement.clientWidth;
			const els = [];
			for (const t of document.querySelectorAll("main table")) {
				const heads = [...t.querySelectorAll("thead th")].map((h) => h.textContent.trim());
				const col = heads.indexOf(what.column);
				if (col >= 0)
					t.querySelectorAll("tbody tr").forEach((r) => els.push(r.children[col]));
				if (what.buttons)
					t.querySelectorAll("tbody button").forEach((b) => els.push(b));
			}
			document.querySelectorAll("dl.fields dt").forEach((dt) => {
				if (dt.textContent === what.field) els.push(dt.nextElementSibling);
			});
			if (els.length === 0)
				return ["nothing to check"];
			return els.filter((e) => {
				const r = e.getBoundingClientRect();
				return r.left < 0 || r.right > w + 0.5;
			}).map((e) => `${e.tagName} "${e.textContent.slice(0, 30)}" at ${Math.round(e.getBoundingClientRect().left)}..${Math.round(e.getBoundingClientRect().right)} of ${w}`);
		}, what);
		await page.setViewport(laptop);
		return off;
	};
	// the contrast of every link against what lies behind it (WCAG's
	// relative luminance; backgrounds with alpha composited up from the
	// page), the lowest found
	const lowestLinkContrast = () => page.evaluate(() => {
		const rgba = (s) => {
			const m = s.match(/rgba?\(([^)]*)\)/);
			const v = m ? m[1].split(",").map(Number) : [0, 0, 0, 0];
			return { r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1 };
		};
		const lum = (c) => {
			const f = (x) => { x /= 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
			return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
		};
		const behind = (el) => {
			const layers = [];
			for (let e = el; e; e = e.parentElement)
				layers.unshift(rgba(getComputedStyle(e).backgroundColor));
			let c = { r: 255, g: 255, b: 255 };
			for (const l of layers)
				c = { r: l.r * l.a + c.r * (1 - l.a), g: l.g * l.a + c.g * (1 - l.a), b: l.b * l.a + c.b * (1 - l.a) };
			return c;
		};
		let low = { ratio: 99 };
		for (const a of document.querySelectorAll("a")) {
			if (!a.getClientRects().length)
				continue;
			const fg = lum(rgba(getComputedStyle(a).color)), bg = lum(behind(a));
			const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
			if (ratio < low.ratio)
				low = { ratio, link: a.textContent.trim(), color: getComputedStyle(a).color };
		}
		return low;
	});

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
	// on a phone, the attempts' errors and the last error are on screen;
	// on a laptop the attempts are still a table with its headings
	for (const what of [{ column: "Error" }, { field: "last error" }]) {
		const off = await offScreenAtPhone(what);
		check(off.length === 0, `the task page at phone width: ${JSON.stringify(what)} off screen: ${off}`);
	}
	check(await page.$eval("main table thead", (e) => getComputedStyle(e).display !== "none"),
		"the attempts table keeps its headings on a laptop");

	// bulk retry by selection
	await page.goto(base + "/failed", { waitUntil: "load" });
	for (const id of ids)
		await page.click(`input[name=id][value='${id}']`);
	// a live update of the list in between keeps the ticked boxes
	await page.evaluate(() => { window.skedMarker = "failed"; });
	await page.waitForResponse((r) => r.url() === base + "/failed" && r.request().resourceType() === "fetch",
		{ timeout: 10000 });
	await page.waitForFunction(() => /updated [01]s ago/.test(document.getElementById("live-state").textContent),
		{ timeout: 5000 });
	const ticked = await page.$$eval("input[name=id]:checked", (els) => els.map((e) => e.value).sort());
	check(JSON.stringify(ticked) === JSON.stringify([...ids].sort()) &&
		await page.evaluate(() => window.skedMarker) === "failed",
		`the ticked boxes after a live update: ${ticked}, not ${ids}`);
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
	// on a phone, each schedule's Pause or Resume button is on screen
	await page.goto(base + "/schedules", { waitUntil: "load" });
	const offButtons = await offScreenAtPhone({ buttons: true });
	check(offButtons.length === 0, "the schedules page at phone width: buttons off screen: " + offButtons);

	// the workflow of a: four boxes in three layers, four edges
	await page.goto(base + `/task/${wf.a}`, { waitUntil: "load" });
	const drawn = await page.$$eval("svg.graph a.node", (els) => els.map((a) => {
		const r = a.querySelector("rect");
		const box = r.getBoundingClientRect();
		const pill = document.createElement("span");
		pill.className = "pill " + a.getAttribute("data-status");
		document.body.appendChild(pill);
		const pillColor = getComputedStyle(pill).color;
		pill.remove();
		return { id: a.getAttribute("data-id"), status: a.getAttribute("data-status"),
			href: a.getAttribute("href"), x: Math.round(box.left),
			stroke: getComputedStyle(r).stroke, pillColor };
	}));
	const byId = Object.fromEntries(drawn.map((n) => [n.id, n]));
	check(drawn.length === 4 && [wf.a, wf.b, wf.c, wf.d].every((id) => byId[id]),
		"the workflow's boxes: " + JSON.stringify(drawn));
	check(byId[wf.a].x < byId[wf.b].x && byId[wf.b].x === byId[wf.c].x && byId[wf.c].x < byId[wf.d].x,
		"the workflow in three layers, parents left of children: " + JSON.stringify(drawn));
	const want = { [wf.a]: "running", [wf.b]: "blocked", [wf.c]: "retry", [wf.d]: "blocked" };
	for (const n of drawn) {
		check(n.status === want[n.id], `task ${n.id} drawn as ${n.status}, not ${want[n.id]}`);
		check(n.href === `/task/${n.id}`, `task ${n.id}'s box links to ${n.href}`);
		check(n.stroke === n.pillColor, `task ${n.id} (${n.status}) drawn in ${n.stroke}, its pill's colour is ${n.pillColor}`);
	}
	check(new Set(drawn.map((n) => n.stroke)).size === 3, "three statuses, three colours: " + JSON.stringify(drawn));
	const edges = (await page.$$eval("svg.graph path.edge", (els) =>
		els.map((e) => e.getAttribute("data-from") + ">" + e.getAttribute("data-to")))).sort();
	const wantEdges = [`${wf.a}>${wf.b}`, `${wf.a}>${wf.c}`, `${wf.b}>${wf.d}`, `${wf.c}>${wf.d}`].sort();
	check(JSON.stringify(edges) === JSON.stringify(wantEdges), `the workflow's edges: ${edges}, not ${wantEdges}`);
	await shoot("workflow");
	// a box is a link to its task
	await go(() => page.click(`svg.graph a.node[data-id='${wf.d}']`));
	check((await page.$eval("h1", (e) => e.textContent)).startsWith(`Task ${wf.d}`), "the box of task d leads to its page");

	// more than the picture holds: 200 drawn, the rest counted
	await page.goto(base + `/task/${wf.fanin}`, { waitUntil: "load" });
	const fanDrawn = (await page.$$("svg.graph a.node")).length;
	check(fanDrawn === 200, `a workflow of ${wf.fan + 1} tasks draws 200, not ${fanDrawn}`);
	const moreText = await page.$eval("#graph-more", (e) => e.textContent);
	seen.graphMore = Number((moreText.match(/at least (\d+) more/) || [])[1]);
	check(seen.graphMore === wf.fan + 1 - 200, "the tasks left out of the picture: " + moreText);

	// live: the page of the running task a follows it to its end
	await page.goto(base + `/task/${wf.a}`, { waitUntil: "load" });
	let navigations = 0;
	const onNav = (f) => { if (f === page.mainFrame()) navigations++; };
	page.on("framenavigated", onNav);
	await page.evaluate(() => { window.skedMarker = "still here"; });
	check(await page.$eval("h1 .pill", (e) => e.textContent) === "running", "task a runs before its release");
	await page.waitForFunction(() => /^live · updated \d+s ago$/.test(document.getElementById("live-state").textContent),
		{ timeout: 10000 });
	const released = Date.now();
	fs.writeFileSync(wf.release, "go");
	await page.waitForFunction(() => document.querySelector("h1 .pill").textContent === "succeeded",
		{ timeout: 20000, polling: 100 });
	seen.liveUpdateMs = Date.now() - released;
	check(await page.evaluate(() => window.skedMarker) === "still here" && navigations === 0,
		"the page updated in place (it navigated " + navigations + " time(s))");
	await page.waitForFunction((b) => {
		const n = document.querySelector(`svg.graph a.node[data-id='${b}']`);
		return n && n.getAttribute("data-status") === "pending";
	}, { timeout: 10000 }, wf.b);
	await shoot("live");
	page.off("framenavigated", onNav);
	// paused: no request for the page; resumed: live again
	await page.click("#live-toggle");
	check(await page.$eval("#live-state", (e) => e.textContent) === "paused", "the pause button pauses");
	let asked = 0;
	const onReq = (r) => { if (r.url() === base + `/task/${wf.a}`) asked++; };
	page.on("request", onReq);
	await new Promise((r) => setTimeout(r, 7000));
	check(asked === 0, `a paused page asked for itself ${asked} time(s)`);
	await page.click("#live-toggle");
	await page.waitForFunction(() => document.getElementById("live-state").textContent.startsWith("live"), { timeout: 5000 });
	await new Promise((r) => setTimeout(r, 4000));
	check(asked >= 1, "a resumed page asks for itself again");
	// hidden (another tab in front): no request; shown: one at once
	const other = await browser.newPage();
	await other.goto("about:blank");
	await other.bringToFront();
	check(await page.evaluate(() => document.visibilityState) === "hidden", "a tab behind another is hidden");
	await new Promise((r) => setTimeout(r, 1000)); // one already under way ends
	asked = 0;
	await new Promise((r) => setTimeout(r, 7000));
	check(asked === 0, `a hidden page asked for itself ${asked} time(s)`);
	const shownAt = Date.now();
	await page.bringToFront();
	await page.waitForResponse((r) => r.url() === base + `/task/${wf.a}`, { timeout: 5000 });
	seen.askedWhenShownMs = Date.now() - shownAt;
	check(seen.askedWhenShownMs < 2500, `a page shown again asked for itself after ${seen.askedWhenShownMs} ms`);
	await other.close();
	page.off("request", onReq);

	// links read at WCAG AA (4.5:1) in the light and the dark scheme
	for (const scheme of ["light", "dark"]) {
		await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
		for (const p of ["/", "/failed", `/task/${ids[0]}`]) {
			await page.goto(base + p, { waitUntil: "load" });
			const low = await lowestLinkContrast();
			check(low.ratio >= 4.5, `a link on ${p} in the ${scheme} scheme has contrast ` +
				`${low.ratio.toFixed(2)}:1, under 4.5:1: ${JSON.stringify(low)}`);
			seen[`linkContrast_${scheme}`] = Math.min(seen[`linkContrast_${scheme}`] || 99, Number(low.ratio.toFixed(2)));
		}
	}
	await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);

	check(alerts === 0, `no script from the database ran (${alerts} alert(s))`);
	check(errors.length === 0, "no errors in the page's console: " + errors.join("; "));
	seen.ok = true;
	console.log(JSON.stringify(seen));
} finally {
	await browser.close();
	fs.rmSync(profile, { recursive: true, force: true });
}
