// site.js - the filters of printkbot's static site (index.html).  It reads
// window.PK_SITE (data.js, written by `printkbot report --site`) and shows
// the series that match the verdict, file or directory, and author asked
// for.  Everything from the data goes in as text (textContent); the only
// addresses made are pages of this site whose names the bot wrote, checked
// again here.  The filters are kept in the address (#verdict=...&file=...),
// so that a filtered view can be bookmarked and is shown again on load.
(function () {
	"use strict";
	var data = window.PK_SITE;
	var form = document.getElementById("filters");
	if (!data || !form)
		return;
	var PAGE = /^(series|files)\/[A-Za-z0-9_.,+\/-]+\.html$/;
	var STEP = 200;
	var verdict = document.getElementById("f-verdict");
	var file = document.getElementById("f-file");
	var author = document.getElementById("f-author");
	var clear = document.getElementById("f-clear");
	var count = document.getElementById("f-count");
	var rows = document.getElementById("rows");
	var more = document.getElementById("more");
	var matches = [], shown = 0;

	function safePage(p) {
		return typeof p === "string" && PAGE.test(p) && p.indexOf("..") < 0 ? p : null;
	}

	function cell(tr, text, tag) {
		var td = document.createElement("td");
		if (tag) {
			var inner = document.createElement(tag);
			inner.textContent = text;
			td.appendChild(inner);
		} else {
			td.textContent = text;
		}
		tr.appendChild(td);
		return td;
	}

	// one series: [page, date, source, author, subject, verdicts, base, [file indexes], bad, patches]
	function row(s) {
		var tr = document.createElement("tr");
		if (s[8])
			tr.className = "bad";
		cell(tr, s[1]);
		cell(tr, s[2]);
		cell(tr, s[3]);
		var td = cell(tr, "");
		var page = safePage(s[0]);
		var subject = s[4] + (s[9] > 1 ? " (" + s[9] + " patches)" : "");
		if (page) {
			var a = document.createElement("a");
			a.href = page;
			a.textContent = subject;
			td.appendChild(a);
		} else {
			td.textContent = subject;
		}
		cell(tr, s[5]);
		cell(tr, s[6], "code");
		return tr;
	}

	function touches(s, prefix) {
		for (var i = 0; i < s[7].length; i++) {
			var f = data.files[s[7][i]];
			if (f && f[0].lastIndexOf(prefix, 0) === 0)
				return true;
		}
		return false;
	}

	function showMore() {
		var end = Math.min(shown + STEP, matches.length);
		for (; shown < end; shown++)
			rows.appendChild(row(matches[shown]));
		more.hidden = shown >= matches.length;
		count.textContent = matches.length + " of " + data.series.length + " series" +
			(shown < matches.length ? ", the first " + shown + " shown" : "");
	}

	function apply() {
		var v = verdict.value, f = file.value.trim(), a = author.value.trim().toLowerCase();
		matches = data.series.filter(function (s) {
			return (!v || (", " + s[5] + ",").indexOf(", " + v + ",") >= 0) &&
				(!a || s[3].toLowerCase().indexOf(a) >= 0) &&
				(!f || touches(s, f));
		});
		while (rows.firstChild)
			rows.removeChild(rows.firstChild);
		shown = 0;
		showMore();
		var state = [];
		if (v) state.push("verdict=" + encodeURIComponent(v));
		if (f) state.push("file=" + encodeURIComponent(f));
		if (a) state.push("author=" + encodeURIComponent(author.value.trim()));
		var hash = state.length ? "#" + state.join("&") : "";
		if (location.hash !== hash && history.replaceState)
			history.replaceState(null, "", hash || location.pathname);
	}

	// #verdict=...&file=...&author=...: set the fields as a reader would, then filter
	function fromAddress() {
		location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
			var i = kv.indexOf("="), k = kv.slice(0, i), val;
			try { val = decodeURIComponent(kv.slice(i + 1)); } catch (e) { return; }
			if (i < 0) return;
			if (k === "verdict") verdict.value = val;
			else if (k === "file") file.value = val;
			else if (k === "author") author.value = val;
		});
	}

	form.hidden = false;
	form.addEventListener("submit", function (e) { e.preventDefault(); });
	verdict.addEventListener("change", apply);
	file.addEventListener("input", apply);
	author.addEventListener("input", apply);
	more.addEventListener("click", showMore);
	clear.addEventListener("click", function () {
		verdict.value = file.value = author.value = "";
		apply();
	});
	fromAddress();
	apply();
})();
