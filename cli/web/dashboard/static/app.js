// sked dashboard: the little the pages need beyond HTML. Pages work
// without it; it adds "select all", confirmations and auto-refresh.
(function () {
	"use strict";
	document.querySelectorAll("input[data-select-all]").forEach(function (box) {
		box.addEventListener("change", function () {
			document.querySelectorAll("input[name=id]").forEach(function (c) {
				c.checked = box.checked;
			});
		});
	});
	document.querySelectorAll("form[data-confirm]").forEach(function (f) {
		f.addEventListener("submit", function (e) {
			if (!window.confirm(f.getAttribute("data-confirm")))
				e.preventDefault();
		});
	});
	var auto = document.getElementById("autorefresh");
	if (auto) {
		var key = "sked.autorefresh";
		auto.checked = window.localStorage.getItem(key) === "on";
		auto.addEventListener("change", function () {
			window.localStorage.setItem(key, auto.checked ? "on" : "off");
		});
		window.setInterval(function () {
			if (auto.checked && document.visibilityState === "visible")
				window.location.reload();
		}, 10000);
	}
})();
