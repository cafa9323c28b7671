// sked dashboard: the little the pages need beyond HTML. Pages work
// without it (and then never change until reloaded); it adds "select
// all", confirmations and the live update:
//
// Every EVERY_MS while the tab is visible (nothing while it is hidden,
// nothing while paused), the page asks the server for the same page
// again, one request at a time, and brings <main> up to date in place:
// elements that did not change stay as they are (focus, a half-filled
// filter, scroll positions), those that did get their new attributes and
// text, and the boxes ticked in a list stay ticked by task id. While
// text is selected in the page the update waits. An error doubles the
// wait up to MAX_MS; a 401 (the credentials went) stops it. The header
// says "live · updated Ns ago", "paused" or "retrying", with a button
// that pauses and resumes (remembered in this browser). The server
// renders one page per tab per interval (docs/operations.md).
(function () {
	"use strict";
	var EVERY_MS = 3000, MAX_MS = 60000;

	document.addEventListener("change", function (e) {
		var box = e.target;
		if (!box.matches || !box.matches("input[data-select-all]"))
			return;
		document.querySelectorAll("input[name=id]").forEach(function (c) {
			c.checked = box.checked;
		});
	});
	document.addEventListener("submit", function (e) {
		var f = e.target;
		if (f.hasAttribute("data-confirm") &&
		    !window.confirm(f.getAttribute("data-confirm")))
			e.preventDefault();
	});

	var main = document.querySelector("main");
	var bar = document.getElementById("live");
	if (!main || !bar || !window.fetch || !window.DOMParser)
		return;
	var state = document.getElementById("live-state");
	var toggle = document.getElementById("live-toggle");
	var key = "sked.live";
	var paused = false;
	try {
		paused = window.localStorage.getItem(key) === "paused";
	} catch (e) { /* storage refused: live */ }
	var timer = null, busy = false, wait = EVERY_MS, updated = Date.now();
	var failing = false, stopped = "";

	function say() {
		bar.classList.toggle("paused", paused || stopped !== "");
		bar.classList.toggle("failing", failing);
		toggle.textContent = paused ? "Resume" : "Pause";
		toggle.hidden = stopped !== "";
		if (stopped)
			state.textContent = stopped;
		else if (paused)
			state.textContent = "paused";
		else if (failing)
			state.textContent = "retrying in " + Math.round(wait / 1000) + "s";
		else
			state.textContent = "live · updated " +
				Math.max(0, Math.round((Date.now() - updated) / 1000)) + "s ago";
	}

	// old becomes like new (a node of the fetched page), keeping what
	// did not change
	function morph(old, neu) {
		if (old.nodeType !== neu.nodeType || old.nodeName !== neu.nodeName) {
			old.parentNode.replaceChild(document.importNode(neu, true), old);
			return;
		}
		if (old.nodeType !== 1) {
			if (old.nodeValue !== neu.nodeValue)
				old.nodeValue = neu.nodeValue;
			return;
		}
		var i, a;
		for (i = old.attributes.length - 1; i >= 0; i--) {
			a = old.attributes[i];
			if (!neu.hasAttributeNS(a.namespaceURI, a.localName))
				old.removeAttributeNS(a.namespaceURI, a.localName);
		}
		for (i = 0; i < neu.attributes.length; i++) {
			a = neu.attributes[i];
			if (old.getAttributeNS(a.namespaceURI, a.localName) !== a.value)
				old.setAttributeNS(a.namespaceURI, a.name, a.value);
		}
		var oc = old.childNodes, nc = neu.childNodes;
		for (i = 0; i < nc.length; i++) {
			if (i < oc.length)
				morph(oc[i], nc[i]);
			else
				old.appendChild(document.importNode(nc[i], true));
		}
		while (oc.length > nc.length)
			old.removeChild(old.lastChild);
	}

	function selecting() {
		var s = window.getSelection && window.getSelection();
		return s && !s.isCollapsed && s.anchorNode && main.contains(s.anchorNode);
	}

	function apply(html) {
		var doc = new DOMParser().parseFromString(html, "text/html");
		var fresh = doc.querySelector("main");
		if (!fresh)
			return false;
		var ticked = {};
		main.querySelectorAll("input[type=checkbox][name=id]").forEach(function (c) {
			if (c.checked)
				ticked[c.value] = true;
		});
		var x = window.scrollX, y = window.scrollY;
		var scrolled = [];
		main.querySelectorAll(".scroll, div.graph").forEach(function (el, i) {
			scrolled[i] = [el.scrollLeft, el.scrollTop];
		});
		morph(main, fresh);
		main.querySelectorAll("input[type=checkbox][name=id]").forEach(function (c) {
			c.checked = !!ticked[c.value];
		});
		main.querySelectorAll(".scroll, div.graph").forEach(function (el, i) {
			if (scrolled[i]) {
				el.scrollLeft = scrolled[i][0];
				el.scrollTop = scrolled[i][1];
			}
		});
		window.scrollTo(x, y);
		if (doc.title)
			document.title = doc.title;
		return true;
	}

	function schedule(ms) {
		window.clearTimeout(timer);
		timer = null;
		if (!paused && !stopped && document.visibilityState === "visible")
			timer = window.setTimeout(tick, ms);
	}

	function tick() {
		timer = null;
		if (busy || paused || stopped || document.visibilityState !== "visible")
			return;
		if (selecting())
			return schedule(EVERY_MS);
		busy = true;
		window.fetch(window.location.href, {
			credentials: "same-origin",
			cache: "no-store",
			redirect: "follow",
			headers: { "X-Sked-Live": "1" },
		}).then(function (r) {
			if (r.status === 401) {
				stopped = "stopped: sign in again (reload)";
				return null;
			}
			// a task that went (404) is news too; other errors are not
			var ct = r.headers.get("Content-Type") || "";
			if ((!r.ok && r.status !== 404) || ct.indexOf("text/html") !== 0)
				throw new Error("HTTP " + r.status);
			return r.text();
		}).then(function (html) {
			busy = false;
			if (html !== null && !apply(html))
				throw new Error("no page");
			failing = false;
			wait = EVERY_MS;
			updated = Date.now();
			say();
			schedule(wait);
		}).catch(function () {
			busy = false;
			failing = true;
			wait = Math.min(wait * 2, MAX_MS);
			say();
			schedule(wait);
		});
	}

	toggle.addEventListener("click", function () {
		paused = !paused;
		try {
			window.localStorage.setItem(key, paused ? "paused" : "live");
		} catch (e) { /* remembered for this page only */ }
		say();
		if (!paused)
			tick();
		else
			schedule(0);
	});
	document.addEventListener("visibilitychange", function () {
		if (document.visibilityState === "visible")
			tick(); // straight away: the page may be old
		else
			schedule(0); // clears the timer
	});
	window.setInterval(function () {
		if (document.visibilityState === "visible")
			say();
	}, 1000);
	bar.hidden = false;
	say();
	schedule(wait);
})();
