package azureblob

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// The audit log's bounds: an append blob takes at most 50,000 blocks (one line is one block), so a blob is
// rotated well before — at AuditMaxBlocks blocks or AuditMaxBytes, whichever comes first — and every day starts
// a new one.
const (
	AuditMaxBlocks = 49000
	AuditMaxBytes  = 64 << 20
)

// auditName is a day's audit blob n: 2026-12-02.0000.jsonl.
var auditName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}\.\d{4}\.jsonl$`)

// AuditLog is the shared record: append blobs in a container of their own, one line a block, each appended at
// the position this writer last saw the blob end at (AppendPosition) and within AuditMaxBytes (MaxSize) — so
// concurrent writers, on any machine, never interleave or overwrite a line: the one that lost the race reads the
// blob's new end and appends after it. A line whose append's answer was lost is known by reading it back at the
// position it was sent for, so it is never appended twice.
type AuditLog struct {
	client *container.Client
	where  string
	scrub  func(string) string
	now    func() time.Time

	// maxBlocks and maxBytes bound one blob (AuditMaxBlocks, AuditMaxBytes; tests lower them).
	maxBlocks int32
	maxBytes  int64

	mu     sync.Mutex
	day    string
	seq    int
	known  bool
	pos    int64
	blocks int32
}

// AuditLog is the shared record in the audit container name: a container of this account, or an https URL of a
// container in another (reached with Microsoft Entra ID). It is never this dead-letter container.
func (a *Container) AuditLog(name string) (*AuditLog, error) {
	l := &AuditLog{scrub: a.scrub, now: time.Now, maxBlocks: AuditMaxBlocks, maxBytes: AuditMaxBytes}
	if strings.Contains(name, "://") {
		u, err := url.Parse(name)
		if err != nil || u.Scheme != "https" && !(u.Scheme == "http" && a.local) || u.Host == "" || u.User != nil || u.RawQuery != "" ||
			strings.Count(strings.Trim(u.Path, "/"), "/") != 0 && !a.local {
			return nil, errors.New("--audit-container: want a container name, or https://<account>.blob.core.windows.net/<container> (no SAS: it is reached with Microsoft Entra ID)")
		}
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("--audit-container: no Microsoft Entra ID credential: %s", a.scrub(err.Error()))
		}
		c, err := container.NewClient(name, cred, &container.ClientOptions{ClientOptions: a.opts.ClientOptions})
		if err != nil {
			return nil, fmt.Errorf("--audit-container: %s", a.scrub(err.Error()))
		}
		path := strings.Trim(u.Path, "/")
		l.client, l.where = c, accountOf(u.Scheme+"://"+u.Host)+"/"+path
		if acct, cont, ok := strings.Cut(path, "/"); ok { // the emulator's path style: /ACCOUNT/CONTAINER
			l.where = acct + "/" + cont
		}
		if l.where == a.Describe() {
			return nil, errors.New("--audit-container: never the dead-letter container (a blob at its root is a BlobCreated for the replay)")
		}
		return l, nil
	}
	if err := validContainerName(name); err != nil {
		return nil, err
	}
	if name == a.name {
		return nil, errors.New("--audit-container: never the dead-letter container (a blob at its root is a BlobCreated for the replay; under a prefix it shows as a pane)")
	}
	l.client, l.where = a.svc.ServiceClient().NewContainerClient(name), a.account+"/"+name
	return l, nil
}

// validContainerName is Azure's rule for container names: 3 to 63 lower-case letters, digits and single dashes.
func validContainerName(n string) error {
	if len(n) < 3 || len(n) > 63 || !regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(n) {
		return fmt.Errorf("--audit-container %q: a container name is 3 to 63 lower-case letters, digits and single dashes", n)
	}
	return nil
}

// Describe says where the shared record is.
func (l *AuditLog) Describe() string { return "audit container " + l.where }

// Create makes the audit container (nothing when it exists).
func (l *AuditLog) Create(ctx context.Context) (created bool, err error) {
	_, err = l.client.Create(ctx, nil)
	switch {
	case err == nil:
		return true, nil
	case bloberror.HasCode(err, bloberror.ContainerAlreadyExists):
		return false, nil
	}
	return false, l.fail("create the audit container", err)
}

func (l *AuditLog) fail(op string, err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" { // (a proxy's or a gateway's answer carries no storage error code)
			code = http.StatusText(re.StatusCode)
		}
		return fmt.Errorf("%s %s: %s (%d)", op, l.where, code, re.StatusCode)
	}
	return fmt.Errorf("%s %s: %s", op, l.where, l.scrub(err.Error()))
}

// Append writes the line as one block at the end of the day's current blob, never interleaved.
func (l *AuditLog) Append(ctx context.Context, line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	day := l.now().UTC().Format("2006-01-02")
	if day != l.day {
		l.day, l.seq, l.known = day, 0, false
	}
	size := int64(len(line))
	maxSize := l.maxBytes
	for try := 0; try < 400; try++ {
		if l.seq > 9999 {
			return fmt.Errorf("append to %s: no audit blob left for %s", l.where, day)
		}
		ab := l.client.NewAppendBlobClient(fmt.Sprintf("%s.%04d.jsonl", day, l.seq))
		if !l.known {
			if err := l.look(ctx, ab); err != nil {
				return err
			}
			if !l.known {
				continue // created: look again
			}
		}
		if l.blocks >= l.maxBlocks || l.pos+size > maxSize {
			l.seq, l.known = l.seq+1, false
			continue
		}
		pos := l.pos
		_, err := ab.AppendBlock(ctx, streaming.NopCloser(bytes.NewReader(line)), &appendblob.AppendBlockOptions{
			AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: &pos, MaxSize: &maxSize}})
		switch {
		case err == nil:
			l.pos, l.blocks = pos+size, l.blocks+1
			return nil
		case bloberror.HasCode(err, bloberror.AppendPositionConditionNotMet):
			// Another writer appended first — or this one did, and the answer was lost: read what is there.
			l.known = false
			if ours, rerr := l.landed(ctx, ab, pos, line); rerr == nil && ours {
				return nil
			}
			time.Sleep(time.Duration(rand.IntN(20)+1) * time.Millisecond)
		case bloberror.HasCode(err, bloberror.MaxBlobSizeConditionNotMet), bloberror.HasCode(err, bloberror.BlockCountExceedsLimit):
			l.seq, l.known = l.seq+1, false
		default:
			// An answer that never came (the connection dropped after the request went out) leaves the append's
			// fate unknown: the blob says whether the line is there.
			var re *azcore.ResponseError
			if !errors.As(err, &re) && ctx.Err() == nil {
				if ours, rerr := l.landed(context.WithoutCancel(ctx), ab, pos, line); rerr == nil && ours {
					l.pos, l.blocks = pos+size, l.blocks+1
					return nil
				}
			}
			l.known = false
			return l.fail("append to", err)
		}
	}
	return fmt.Errorf("append to %s: too many writers at once; try again", l.where)
}

// look reads where the current blob ends, creating it when it does not exist (If-None-Match *: a blob another
// writer created meanwhile is kept).
func (l *AuditLog) look(ctx context.Context, ab *appendblob.Client) error {
	p, err := ab.GetProperties(ctx, nil)
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound):
		_, err = ab.Create(ctx, &appendblob.CreateOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
		if err != nil && !bloberror.HasCode(err, bloberror.BlobAlreadyExists) && !bloberror.HasCode(err, bloberror.ConditionNotMet) {
			if bloberror.HasCode(err, bloberror.ContainerNotFound) {
				return fmt.Errorf("append to %s: the audit container does not exist (make it with deadletter audit init)", l.where)
			}
			return l.fail("append to", err)
		}
		return nil
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return fmt.Errorf("append to %s: the audit container does not exist (make it with deadletter audit init)", l.where)
	case err != nil:
		return l.fail("append to", err)
	}
	if p.BlobType == nil || *p.BlobType != blob.BlobTypeAppendBlob {
		l.seq++ // a blob deadletter did not write holds the name: the next
		return nil
	}
	l.pos, l.blocks, l.known = deref(p.ContentLength), deref(p.BlobCommittedBlockCount), true
	return nil
}

// landed reports whether line is what the blob holds at pos.
func (l *AuditLog) landed(ctx context.Context, ab *appendblob.Client, pos int64, line []byte) (bool, error) {
	resp, err := ab.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: pos, Count: int64(len(line))}})
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, int64(len(line))+1))
	return err == nil && bytes.Equal(got, line), err
}

// AuditBlob is one audit blob as read: its bytes, or why they could not be read (the others are read still).
type AuditBlob struct {
	Name string
	Data []byte
	Err  error
}

// ReadAll reads every audit blob, oldest first, each at most AuditMaxBytes plus a line. A blob that cannot be read
// is returned with its error, the rest read; a container that cannot be listed is the error.
func (l *AuditLog) ReadAll(ctx context.Context) ([]AuditBlob, error) {
	var names []string
	pager := l.client.NewListBlobsFlatPager(nil)
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			if bloberror.HasCode(err, bloberror.ContainerNotFound) {
				return nil, fmt.Errorf("%s does not exist (make it with deadletter audit init)", l.where)
			}
			return nil, l.fail("list", err)
		}
		for _, it := range resp.Segment.BlobItems {
			if it != nil && it.Name != nil && auditName.MatchString(*it.Name) {
				names = append(names, *it.Name)
			}
		}
	}
	slices.Sort(names)
	out := make([]AuditBlob, 0, len(names))
	for _, n := range names {
		b, err := l.readOne(ctx, n)
		out = append(out, AuditBlob{Name: l.where + "/" + n, Data: b, Err: err})
	}
	return out, nil
}

func (l *AuditLog) readOne(ctx context.Context, n string) ([]byte, error) {
	resp, err := l.client.NewBlobClient(n).DownloadStream(ctx, nil)
	if err != nil {
		return nil, l.fail("read "+n+" of", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, AuditMaxBytes+(4<<20)+1))
	if err != nil {
		return nil, l.fail("read "+n+" of", err)
	}
	if len(b) > AuditMaxBytes+(4<<20) {
		return nil, fmt.Errorf("over %d bytes: not an audit blob deadletter writes", AuditMaxBytes)
	}
	return b, nil
}

// Principal names the Microsoft Entra ID principal the container is reached as — its user principal name, else
// its display name, else its object id — read from the claims of the token the credential gives for storage
// (cached by the credential; the token itself is never kept or said). "" for a key or a SAS, or when it cannot
// be told.
func (a *Container) Principal(ctx context.Context) string {
	if a.token == nil {
		return ""
	}
	tok, err := a.token.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}})
	if err != nil {
		return ""
	}
	return principalOf(tok.Token)
}

// principalOf reads a JWT's payload (unverified: it names, it does not authorize) for who it was issued to.
func principalOf(jwt string) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var c struct {
		UPN               string `json:"upn"`
		PreferredUsername string `json:"preferred_username"`
		UniqueName        string `json:"unique_name"`
		Name              string `json:"name"`
		OID               string `json:"oid"`
	}
	if json.Unmarshal(b, &c) != nil {
		return ""
	}
	for _, v := range []string{c.UPN, c.PreferredUsername, c.UniqueName, c.Name, c.OID} {
		if v != "" && len(v) <= 256 {
			return v
		}
	}
	return ""
}
