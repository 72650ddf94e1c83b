package imposter

import (
	"context"
	"log/slog"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// setLog makes l the imposter's log and notes which levels it takes.
func (im *Imposter) setLog(l *slog.Logger) {
	im.log = l
	im.logInfo = l.Enabled(context.Background(), slog.LevelInfo)
	im.logDebug = l.Enabled(context.Background(), slog.LevelDebug)
}

// enabled reports whether the imposter's log takes lines at level: a request's log line is
// built only when it does. The log's level does not change while it runs, so the common levels
// are looked up once.
func (im *Imposter) enabled(level slog.Level) bool {
	switch level {
	case slog.LevelInfo:
		return im.logInfo
	case slog.LevelDebug:
		return im.logDebug
	}
	return im.log.Enabled(context.Background(), level)
}

// logLine logs msg at level (check enabled first). Unlike slog.Logger's methods it does not
// look up the caller, which costs more than the rest of a request's line.
func (im *Imposter) logLine(level slog.Level, msg string) {
	_ = im.log.Handler().Handle(context.Background(), slog.NewRecord(time.Now(), level, msg, 0))
}

// logFailure logs a request that failed with err (its answer is a 500), as Mountebank does:
// "client X=> {error}".
func (im *Imposter) logFailure(req *request.Request, err error) {
	if im.enabled(slog.LevelError) {
		var details config.Value = &config.Object{}
		if list, _ := get(scriptErrorBody(err), "errors").([]any); len(list) > 0 {
			details = list[0]
		}
		im.logLine(slog.LevelError, req.RequestFrom()+" X=> "+string(config.MarshalJSON(details, 0)))
	}
}
