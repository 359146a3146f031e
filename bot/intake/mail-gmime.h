/*
 * mail-gmime.h - what mail.c lends the other module that speaks GMime
 * (report/compose.c, which writes the mail mail.c's words read back):
 * GMime started once, and the one mailbox a string names.  Not for
 * modules that deal in plain strings: they have mail.h.
 */
#ifndef PK_MAIL_GMIME_H
#define PK_MAIL_GMIME_H

#include <gmime/gmime.h>

/* g_mime_init() once per process, whoever asks first. */
void pk_mail_gmime_init(void);

/* The one mailbox a string names, or NULL (none, several, a group, a control character).  Caller unrefs. */
InternetAddressList *pk_mail_one_mailbox(const char *mailbox);

#endif
