// lockorder_test.go checks the package's source against the lock order
// written in doc.go: while a lock is held, only locks after it in the
// order are taken, and no connection is closed (its close callbacks take
// connsMu, watchMu and wmu).

package remoting

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// lockRank is doc.go's order: a lock may be taken while only locks of a
// lower rank are held. closeLock stands for closing a connection, which
// must happen with no lock held.
var lockRank = map[string]int{
	closeLock:         0,
	"asyncOut.wmu":    1,
	"asyncOut.qmu":    2,
	"Conn.watchMu":    2,
	"Budget.mu":       3,
	"Server.connsMu":  3,
	"heavyQueue.mu":   3,
	"workers.mu":      3,
	"bufPool.mu":      3,
	"handedConn.once": 2,
}

const closeLock = "(closing a connection)"

// imported holds the names the package's files import packages under.
var imported = map[string]bool{}

// lockOf names the lock of a Lock or Unlock call's receiver expression,
// given the type of the method it appears in.
func lockOf(x ast.Expr, recv string) string {
	sel, ok := x.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	switch sel.Sel.Name {
	case "wmu", "qmu":
		return "asyncOut." + sel.Sel.Name
	case "watchMu":
		return "Conn.watchMu"
	case "connsMu":
		return "Server.connsMu"
	case "mu":
		return recv + ".mu"
	}
	return "?" + sel.Sel.Name
}

type lockFunc struct {
	recv  string
	decl  *ast.FuncDecl
	locks map[string]bool // taken by it or by what it calls
	calls map[string]bool
}

// calleeName is what a call resolves to by name: a function's name, a
// method's with a "." before it, closeLock for Close and evict.
func calleeName(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && x.Obj == nil && imported[x.Name] {
			return "" // another package's function
		}
		switch f.Sel.Name {
		case "Close":
			// A handed-off connection's socket (handedConn.Conn) is
			// not netpoll's: closing it runs none of our callbacks.
			if x, ok := f.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Conn" {
				return ""
			}
			return closeLock
		case "evict":
			return closeLock
		}
		return "." + f.Sel.Name
	}
	return ""
}

func TestLockOrder(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	// Plain functions and methods by name: a plain call resolves to the
	// first, a selector call to the second (methods of different types
	// with one name are taken together).
	funcs, methods := map[string][]*lockFunc{}, map[string][]*lockFunc{}
	var all []*lockFunc
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			name := strings.Trim(im.Path.Value, `"`)
			name = name[strings.LastIndex(name, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imported[name] = true
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			lf := &lockFunc{decl: fd, locks: map[string]bool{}, calls: map[string]bool{}}
			if fd.Recv != nil {
				rt := fd.Recv.List[0].Type
				if st, ok := rt.(*ast.StarExpr); ok {
					rt = st.X
				}
				if id, ok := rt.(*ast.Ident); ok {
					lf.recv = id.Name
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Lock" || sel.Sel.Name == "Do") {
					if l := lockOfCall(sel, lf.recv); l != "" {
						lf.locks[l] = true
					}
				}
				if c := calleeName(call); c == closeLock {
					lf.locks[closeLock] = true
				} else if c != "" {
					lf.calls[c] = true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Do" && lf.recv == "handedConn" {
					lf.locks["handedConn.once"] = true
				}
				return true
			})
			if fd.Recv == nil {
				funcs[fd.Name.Name] = append(funcs[fd.Name.Name], lf)
			} else {
				methods[fd.Name.Name] = append(methods[fd.Name.Name], lf)
			}
			all = append(all, lf)
		}
	}
	// What each function takes, through what it calls.
	for changed := true; changed; {
		changed = false
		for _, lf := range all {
			for c := range lf.calls {
				for _, callee := range resolve(funcs, methods, c) {
					for l := range callee.locks {
						if !lf.locks[l] {
							lf.locks[l] = true
							changed = true
						}
					}
				}
			}
		}
	}
	var bad []string
	for _, lf := range all {
		w := &lockWalk{t: t, fset: fset, lf: lf, funcs: funcs, methods: methods, bad: &bad}
		w.block(lf.decl.Body.List, nil)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// lockOfCall names the lock a Lock (or a sync.Once's Do) call takes.
func lockOfCall(sel *ast.SelectorExpr, recv string) string {
	if sel.Sel.Name == "Do" {
		if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "once" && recv == "handedConn" {
			return "handedConn.once"
		}
		return ""
	}
	return lockOf(sel.X, recv)
}

type lockWalk struct {
	t              *testing.T
	fset           *token.FileSet
	lf             *lockFunc
	funcs, methods map[string][]*lockFunc
	bad            *[]string
}

// resolve finds the functions a call name (calleeName, "." before a
// method's) may run.
func resolve(funcs, methods map[string][]*lockFunc, name string) []*lockFunc {
	if m, ok := strings.CutPrefix(name, "."); ok {
		return methods[m]
	}
	return funcs[name]
}

// block walks statements in order with held the locks held at their
// start, and returns those held at the end. A nested block that ends in
// a return or a branch leaves the locks as they were before it.
func (w *lockWalk) block(list []ast.Stmt, held []string) []string {
	for _, st := range list {
		held = w.stmt(st, held)
	}
	return held
}

func terminates(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	switch list[len(list)-1].(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	}
	return false
}

func (w *lockWalk) nested(list []ast.Stmt, held []string) []string {
	out := w.block(list, append([]string(nil), held...))
	if terminates(list) {
		return held
	}
	return out
}

func (w *lockWalk) stmt(st ast.Stmt, held []string) []string {
	switch s := st.(type) {
	case *ast.BlockStmt:
		return w.nested(s.List, held)
	case *ast.IfStmt:
		if s.Init != nil {
			held = w.stmt(s.Init, held)
		}
		w.expr(s.Cond, held)
		out := w.nested(s.Body.List, held)
		if s.Else != nil {
			w.stmt(s.Else, held)
		}
		return out
	case *ast.ForStmt:
		w.nested(s.Body.List, held)
		return held
	case *ast.RangeStmt:
		w.expr(s.X, held)
		w.nested(s.Body.List, held)
		return held
	case *ast.SwitchStmt:
		for _, cc := range s.Body.List {
			w.nested(cc.(*ast.CaseClause).Body, held)
		}
		return held
	case *ast.TypeSwitchStmt:
		for _, cc := range s.Body.List {
			w.nested(cc.(*ast.CaseClause).Body, held)
		}
		return held
	case *ast.SelectStmt:
		for _, cc := range s.Body.List {
			w.nested(cc.(*ast.CommClause).Body, held)
		}
		return held
	case *ast.DeferStmt:
		// A deferred Unlock keeps the lock to the end; a deferred call
		// runs at the end, with the locks then held (not followed).
		return held
	case *ast.GoStmt:
		return held // runs on its own goroutine, holding nothing
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				switch sel.Sel.Name {
				case "Lock":
					if l := lockOf(sel.X, w.lf.recv); l != "" {
						w.take(l, held, call)
						return append(held, l)
					}
				case "Unlock":
					if l := lockOf(sel.X, w.lf.recv); l != "" {
						return without(held, l)
					}
				}
			}
		}
	}
	ast.Inspect(st, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			if call, ok := st.(*ast.ExprStmt); ok && isOnceDo(call.X) && w.lf.recv == "handedConn" {
				w.block(n.Body.List, append(held[:len(held):len(held)], "handedConn.once"))
			}
			return false
		case *ast.CallExpr:
			w.call(n, held)
		}
		return true
	})
	return held
}

func isOnceDo(x ast.Expr) bool {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Do"
}

func (w *lockWalk) expr(x ast.Expr, held []string) {
	if x == nil {
		return
	}
	ast.Inspect(x, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			w.call(call, held)
		}
		return true
	})
}

func without(held []string, l string) []string {
	out := make([]string, 0, len(held))
	for _, h := range held {
		if h != l {
			out = append(out, h)
		}
	}
	return out
}

// call records what a call made with held takes.
func (w *lockWalk) call(call *ast.CallExpr, held []string) {
	if len(held) == 0 {
		return
	}
	name := calleeName(call)
	if name == closeLock {
		w.take(closeLock, held, call)
		return
	}
	for _, callee := range resolve(w.funcs, w.methods, name) {
		for l := range callee.locks {
			w.take(l, held, call)
		}
	}
}

// take checks that l may be taken with held.
func (w *lockWalk) take(l string, held []string, at ast.Node) {
	rl, ok := lockRank[l]
	if !ok {
		*w.bad = append(*w.bad, w.fset.Position(at.Pos()).String()+": lock "+l+" is not in the written order (doc.go)")
		return
	}
	for _, h := range held {
		if rh := lockRank[h]; rl <= rh {
			what := "takes " + l
			if l == closeLock {
				what = "closes a connection"
			}
			*w.bad = append(*w.bad, w.fset.Position(at.Pos()).String()+": "+w.lf.decl.Name.Name+" "+what+" while holding "+h)
		}
	}
}
