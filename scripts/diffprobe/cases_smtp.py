# smtp imposters: what is recorded of each message (from, to, cc, bcc, subject, text, html,
# attachments, envelope), messageId and date left out. requests are (from, [to], message).
CASES = []
def C(name, *requests, **kw):
    CASES.append(dict(name=name, imposter={"protocol": "smtp"}, requests=list(requests), smtp=True, **kw))
C('plain', ('a@x.test', ['b@y.test'], b'From: A <a@x.test>\r\nTo: B <b@y.test>\r\nSubject: hi\r\n\r\nbody text\r\n'))
C('cc bcc envelope', ('env@x.test', ['b@y.test', 'c@y.test', 'hidden@z.test'],
  b'From: "Ann, A." <a@x.test>\r\nTo: b@y.test, "Bee" <b2@y.test>\r\nCc: c@y.test\r\nReply-To: r@x.test\r\nSubject: =?UTF-8?B?w7xuw68=?=\r\nX-Priority: 1\r\nIn-Reply-To: <p@x>\r\nReferences: <p@x> <q@x>\r\n\r\nhello\r\n'))
C('no subject no to', ('a@x.test', ['b@y.test'], b'From: a@x.test\r\n\r\njust text\r\n'))
C('html alternative', ('a@x.test', ['b@y.test'], b'From: a@x.test\r\nTo: b@y.test\r\nSubject: alt\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nplain part\r\n--B\r\nContent-Type: text/html\r\n\r\n<p>html part</p>\r\n--B--\r\n'))
C('attachment', ('a@x.test', ['b@y.test'], b'From: a@x.test\r\nTo: b@y.test\r\nSubject: att\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="M"\r\n\r\n--M\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n--M\r\nContent-Type: application/octet-stream; name="f.bin"\r\nContent-Disposition: attachment; filename="f.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAECAw==\r\n--M--\r\n'))
C('quoted printable', ('a@x.test', ['b@y.test'], b'From: a@x.test\r\nTo: b@y.test\r\nSubject: qp\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nsoft=\r\n break =C3=BC\r\n'))
C('html only', ('a@x.test', ['b@y.test'], b'From: a@x.test\r\nTo: b@y.test\r\nContent-Type: text/html\r\n\r\n<b>bold</b>\r\n'))
C('two messages', ('a@x.test', ['b@y.test'], b'From: a@x.test\r\nSubject: one\r\n\r\n1\r\n'), ('c@x.test', ['d@y.test'], b'From: c@x.test\r\nSubject: two\r\n\r\n2\r\n'))
# Mountebank 2.9.1 ends its process on a message without a From header (smtpRequest.js reads
# parsed.from.value); mockd records it (PRODUCT.md: no input crashes mockd).
C('no From header (mb dies)', ('a@x.test', ['b@y.test'], b'Subject: one\r\n\r\n1\r\n'))
C('message-id', ('a@x.test', ['b@y.test'], b'From: a@x.test\r\nMessage-ID: <id1@x.test>\r\nDate: Mon, 2 Jan 2006 15:04:05 +0000\r\nSubject: id\r\n\r\nx\r\n'))
