/* authres.c - Authentication-Results (RFC 8601) read, and whom they vouch for; see authres.h. */
#include "intake/authres.h"

#include "base/util.h"

#include <string.h>

/* The longest a value is shown in a reason: a forger writes the values of a failed check. */
#define SHOW_MAX 64

static void prop_free(struct pk_authres_prop *p)
{
	g_free(p->ptype);
	g_free(p->property);
	g_free(p->value);
	g_free(p);
}

static void result_free(struct pk_authres_result *r)
{
	g_free(r->method);
	g_free(r->result);
	if (r->props)
		g_ptr_array_unref(r->props);
	g_free(r);
}

void pk_authres_clear(struct pk_authres *a)
{
	g_free(a->authserv_id);
	if (a->results)
		g_ptr_array_unref(a->results);
	memset(a, 0, sizeof *a);
}

/* The reader: where it is, and where it started, to say at which byte something was wrong. */
struct reader {
	const char *start, *p;
};

static int fail_at(const struct reader *r, GError **err, const char *what)
{
	if (!*r->p)
		return pk_error(err, PK_ERROR_INPUT, "Authentication-Results: %s at its end", what);
	return pk_error(err, PK_ERROR_INPUT, "Authentication-Results: %s at byte %td ('%c')", what,
			r->p - r->start, g_ascii_isprint(*r->p) ? *r->p : '?');
}

/* RFC 2045's tspecials: what ends a token. */
static bool tspecial(char c)
{
	return c && strchr("()<>@,;:\\\"/[]?=", c);
}

/* A control character other than the white space of folding. */
static bool ctl(char c)
{
	return ((unsigned char)c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f;
}

/* Skip white space, folding and comments (nested, with quoted-pairs).  0, or -1 with err. */
static int skip_cfws(struct reader *r, GError **err)
{
	for (;;) {
		unsigned depth = 0;

		while (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n')
			r->p++;
		if (*r->p != '(')
			return 0;
		do {
			if (!*r->p)
				return fail_at(r, err, "an unterminated comment");
			if (ctl(*r->p))
				return fail_at(r, err, "a control character");
			if (*r->p == '\\' && r->p[1])
				r->p++;
			else if (*r->p == '(')
				depth++;
			else if (*r->p == ')')
				depth--;
			r->p++;
		} while (depth);
	}
}

/* A quoted-string at r->p (its '"'): its text, escapes undone (new), or NULL with err. */
static char *read_quoted(struct reader *r, GError **err)
{
	g_autoptr(GString) s = g_string_new(NULL);

	for (r->p++; *r->p != '"'; r->p++) {
		if (!*r->p) {
			fail_at(r, err, "an unterminated quoted string");
			return NULL;
		}
		if (ctl(*r->p)) {
			fail_at(r, err, "a control character");
			return NULL;
		}
		if (*r->p == '\\' && r->p[1])
			r->p++;
		if (*r->p != '\r' && *r->p != '\n')   /* folding inside quotes is no part of the value */
			g_string_append_c(s, *r->p);
	}
	r->p++;
	return g_string_free(g_steal_pointer(&s), FALSE);
}

/* A token (RFC 2045: no blank, control or tspecial; UTF-8 allowed, RFC 8616), new, or NULL. */
static char *read_token(struct reader *r)
{
	const char *b = r->p;

	while (*r->p && *r->p != ' ' && !ctl(*r->p) && *r->p != '\t' && *r->p != '\r' && *r->p != '\n' &&
	       !tspecial(*r->p))
		r->p++;
	return r->p > b ? g_strndup(b, (gsize)(r->p - b)) : NULL;
}

/* A value: a token or a quoted-string.  New, or NULL with err. */
static char *read_value(struct reader *r, const char *what, GError **err)
{
	char *v;

	if (*r->p == '"')
		return read_quoted(r, err);
	if (!(v = read_token(r)))
		fail_at(r, err, what);
	return v;
}

/* A keyword (letters, digits, '-', '_'), lower case, new; or NULL with err naming what was wanted. */
static char *read_keyword(struct reader *r, const char *what, GError **err)
{
	const char *b = r->p;

	while (g_ascii_isalnum(*r->p) || *r->p == '-' || *r->p == '_')
		r->p++;
	if (r->p == b) {
		fail_at(r, err, what);
		return NULL;
	}
	return g_ascii_strdown(b, r->p - b);
}

/*
 * A property's value: a value, or [[local-part] "@"] domain, whose
 * local-part may be quoted ("a b"@example.org).  Unquoted, it runs to
 * white space, a comment or ';' (base64 and addresses hold '=', '/',
 * '@').  New, or NULL with err.
 */
static char *read_pvalue(struct reader *r, GError **err)
{
	g_autofree char *q = NULL;
	const char *b;

	if (*r->p == '"') {
		if (!(q = read_quoted(r, err)))
			return NULL;
		if (*r->p != '@')
			return g_steal_pointer(&q);
	}
	b = r->p;
	while (*r->p && !g_ascii_isspace(*r->p) && !ctl(*r->p) && !strchr("();\"\\", *r->p))
		r->p++;
	if (r->p == b && !q) {
		fail_at(r, err, "a property without its value");
		return NULL;
	}
	return g_strdup_printf("%s%.*s", q ? q : "", (int)(r->p - b), b);
}

static struct pk_authres_prop *prop_new(char *ptype, char *property, char *value)
{
	struct pk_authres_prop *p = g_new0(struct pk_authres_prop, 1);

	p->ptype = ptype;
	p->property = property;
	p->value = value;
	return p;
}

/* One resinfo after its ';': methodspec [reasonspec] *propspec.  The result (new), or NULL with err. */
static struct pk_authres_result *read_result(struct reader *r, GError **err)
{
	struct pk_authres_result *res = g_new0(struct pk_authres_result, 1);

	res->props = g_ptr_array_new_with_free_func((GDestroyNotify)prop_free);
	if (skip_cfws(r, err) < 0 || !(res->method = read_keyword(r, "a result without its method", err)) ||
	    skip_cfws(r, err) < 0)
		goto fail;
	if (*r->p == '/') {   /* a method's version: "dkim/1" */
		r->p++;
		if (skip_cfws(r, err) < 0)
			goto fail;
		if (!g_ascii_isdigit(*r->p)) {
			fail_at(r, err, "a method version that is no number");
			goto fail;
		}
		while (g_ascii_isdigit(*r->p))
			r->p++;
		if (skip_cfws(r, err) < 0)
			goto fail;
	}
	if (*r->p != '=') {
		fail_at(r, err, "a method without '=' and its result");
		goto fail;
	}
	r->p++;
	if (skip_cfws(r, err) < 0 || !(res->result = read_keyword(r, "a method without its result", err)))
		goto fail;
	for (;;) {
		g_autofree char *ptype = NULL, *property = NULL;
		char *value;

		if (skip_cfws(r, err) < 0)
			goto fail;
		if (!*r->p || *r->p == ';')
			return res;
		if (!(ptype = read_keyword(r, "a property that is no ptype.property=value", err)) ||
		    skip_cfws(r, err) < 0)
			goto fail;
		if (!strcmp(ptype, "reason") && *r->p == '=') {
			r->p++;
			if (skip_cfws(r, err) < 0 || !(value = read_value(r, "a reason without its value", err)))
				goto fail;
			g_ptr_array_add(res->props, prop_new(g_steal_pointer(&ptype), g_strdup(""), value));
			continue;
		}
		if (*r->p != '.') {
			fail_at(r, err, "a property that is no ptype.property=value");
			goto fail;
		}
		r->p++;
		if (skip_cfws(r, err) < 0 ||
		    !(property = read_keyword(r, "a property without its name after the '.'", err)) ||
		    skip_cfws(r, err) < 0)
			goto fail;
		if (*r->p != '=') {
			fail_at(r, err, "a property without '=' and its value");
			goto fail;
		}
		r->p++;
		if (skip_cfws(r, err) < 0 || !(value = read_pvalue(r, err)))
			goto fail;
		g_ptr_array_add(res->props, prop_new(g_steal_pointer(&ptype), g_steal_pointer(&property), value));
	}
fail:
	result_free(res);
	return NULL;
}

int pk_authres_parse(struct pk_authres *out, const char *value, GError **err)
{
	struct reader r = { value, value };
	g_auto(pk_authres_t) a = { 0 };

	a.results = g_ptr_array_new_with_free_func((GDestroyNotify)result_free);
	if (!value)
		return pk_error(err, PK_ERROR_INPUT, "Authentication-Results: no value");
	for (r.p = value; *r.p; r.p++)
		if (ctl(*r.p))
			return fail_at(&r, err, "a control character");
	r.p = value;
	if (skip_cfws(&r, err) < 0 || !(a.authserv_id = read_value(&r, "no authserv-id", err)) ||
	    skip_cfws(&r, err) < 0)
		return -1;
	if (g_ascii_isdigit(*r.p)) {   /* its version: "1" */
		while (g_ascii_isdigit(*r.p))
			r.p++;
		if (skip_cfws(&r, err) < 0)
			return -1;
	}
	if (*r.p != ';')
		return fail_at(&r, err, "no ';' and result after the authserv-id");
	while (*r.p == ';') {
		struct pk_authres_result *res;
		struct reader none = r;

		r.p++;
		/* "; none": no check was made, and nothing else may follow */
		none.p++;
		if (!a.results->len && skip_cfws(&none, NULL) == 0 && !g_ascii_strncasecmp(none.p, "none", 4)) {
			none.p += 4;
			if (skip_cfws(&none, NULL) == 0 && !*none.p) {
				r = none;
				break;
			}
		}
		if (!(res = read_result(&r, err)))
			return -1;
		g_ptr_array_add(a.results, res);
	}
	if (skip_cfws(&r, err) < 0)
		return -1;
	if (*r.p)
		return fail_at(&r, err, "something after the results");
	*out = a;
	memset(&a, 0, sizeof a);
	return 0;
}

const char *pk_authres_prop_get(const struct pk_authres_result *r, const char *ptype, const char *property)
{
	for (guint i = 0; r->props && i < r->props->len; i++) {
		const struct pk_authres_prop *p = r->props->pdata[i];

		if (!g_ascii_strcasecmp(p->ptype, ptype) && !g_ascii_strcasecmp(p->property, property))
			return p->value;
	}
	return NULL;
}

/* The domain of an address or of a bare domain ("a@b.org", "@b.org", "b.org"): lower case, no final dot; new. */
static char *domain_of(const char *v)
{
	const char *at = v ? strrchr(v, '@') : NULL;
	char *d = g_ascii_strdown(at ? at + 1 : v ? v : "", -1);
	size_t n = strlen(d);

	if (n && d[n - 1] == '.')
		d[n - 1] = '\0';
	return d;
}

/*
 * Whether a signature of signer vouches for the From domain from: the
 * same domain, or a parent of it (DMARC's relaxed alignment, without a
 * list of public suffixes: so the parent must have two labels at least,
 * and "org" vouches for nobody).
 */
static bool dkim_aligned(const char *from, const char *signer)
{
	size_t f = strlen(from), s = strlen(signer);

	if (!*signer || !*from)
		return false;
	if (!strcmp(from, signer))
		return true;
	return strchr(signer, '.') && f > s + 1 && from[f - s - 1] == '.' && !strcmp(from + f - s, signer);
}

/* Whether one result vouches for the From domain from; *how (new) says as what when it does. */
static bool result_vouches(const struct pk_authres_result *r, const char *from, char **how)
{
	if (g_strcmp0(r->result, "pass"))
		return false;
	if (!strcmp(r->method, "dkim")) {
		const char *d = pk_authres_prop_get(r, "header", "d");
		const char *i = pk_authres_prop_get(r, "header", "i");
		g_autofree char *dd = d ? domain_of(d) : NULL, *id = i ? domain_of(i) : NULL;

		if (dd && dkim_aligned(from, dd)) {
			*how = g_strdup_printf("dkim=pass header.d=%s", dd);
			return true;
		}
		if (id && dkim_aligned(from, id)) {
			*how = g_strdup_printf("dkim=pass header.i=@%s", id);
			return true;
		}
	} else if (!strcmp(r->method, "spf")) {
		const char *mf = pk_authres_prop_get(r, "smtp", "mailfrom");
		g_autofree char *md = mf ? domain_of(mf) : NULL;

		if (md && *md && !strcmp(md, from)) {
			*how = g_strdup_printf("spf=pass smtp.mailfrom=%s", md);
			return true;
		}
	}
	return false;
}

/* s as a reason may show it: printable ASCII, at most SHOW_MAX bytes, "..." after a cut. */
static void append_shown(GString *out, const char *s)
{
	size_t n = 0;

	for (; s && *s && n < SHOW_MAX; s++, n++)
		g_string_append_c(out, g_ascii_isprint(*s) && *s != ' ' ? *s : '?');
	if (s && *s)
		g_string_append(out, "...");
}

/* What a field found, for a refusal: "dkim=fail header.d=x, spf=none" (appended to out). */
static void append_found(GString *out, const struct pk_authres *a)
{
	if (!a->results->len)
		g_string_append(out, "none");
	for (guint i = 0; i < a->results->len && i < 8; i++) {
		const struct pk_authres_result *r = a->results->pdata[i];
		const char *d = !strcmp(r->method, "dkim") ? pk_authres_prop_get(r, "header", "d")
			      : !strcmp(r->method, "spf") ? pk_authres_prop_get(r, "smtp", "mailfrom") : NULL;

		g_string_append(out, i ? ", " : "");
		append_shown(out, r->method);
		g_string_append_c(out, '=');
		append_shown(out, r->result);
		if (d) {
			g_string_append(out, !strcmp(r->method, "dkim") ? " header.d=" : " smtp.mailfrom=");
			append_shown(out, d);
		}
	}
	if (a->results->len > 8)
		g_string_append(out, ", ...");
}

bool pk_authres_vouches(const char *const *fields, guint n, const char *const *ids, const char *from_addr,
			char **out_what)
{
	g_autoptr(GString) why = g_string_new(NULL);
	g_autofree char *from = NULL;
	bool any = false;

	if (!from_addr || !strchr(from_addr, '@') || !*(from = domain_of(from_addr))) {
		*out_what = g_strdup("its From has no domain to authenticate");
		return false;
	}
	for (const char *const *id = ids; id && *id; id++) {
		g_auto(pk_authres_t) a = { 0 };
		g_autoptr(GError) e = NULL;
		const char *field = NULL;

		/* the topmost field of this id (one whose id does not even read is no one's) */
		for (guint i = 0; i < n && !field; i++) {
			struct reader r = { fields[i], fields[i] };
			g_autofree char *fid = NULL;

			if (!fields[i] || skip_cfws(&r, NULL) < 0 || !(fid = read_value(&r, "", NULL)))
				continue;
			if (!g_ascii_strcasecmp(fid, *id))
				field = fields[i];
		}
		g_string_append(why, why->len ? "; " : "");
		if (!field) {
			g_string_append_printf(why, "no Authentication-Results of %s", *id);
			continue;
		}
		any = true;
		if (pk_authres_parse(&a, field, &e) < 0) {
			g_string_append_printf(why, "%s's cannot be read (%s)", *id, e->message);
			continue;
		}
		for (guint i = 0; i < a.results->len; i++) {
			g_autofree char *how = NULL;

			if (result_vouches(a.results->pdata[i], from, &how)) {
				*out_what = g_strdup_printf("%s (%s)", how, *id);
				return true;
			}
		}
		g_string_append_printf(why, "%s found ", *id);
		append_found(why, &a);
	}
	if (!why->len)
		g_string_append(why, "no authserv-id is trusted");
	else if (any)
		g_string_append_printf(why, ": no pass for %s", from);
	*out_what = g_string_free(g_steal_pointer(&why), FALSE);
	return false;
}
