package main

import (
	"encoding/gob"
	"fmt"
	"os"
	"strings"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // the pure-Go backend, "go"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// ModelConfig is the shape of the policy: a pre-norm causal transformer.
type ModelConfig struct {
	Dim, Layers, Heads, Hidden int
	LearningRate               float64
	Seed                       int64
}

// Policy is one causal language model over the task's vocabulary, shared by
// the search and the aggregation roles. Its variables live in a GoMLX
// context; logProbs runs the forward pass, step one Adam update of the
// policy-gradient loss.
type Policy struct {
	cfg     ModelConfig
	backend backends.Backend
	ctx     *context.Context
	forward *context.Exec
	trainer *context.Exec
	maxLen  int
	vocab   int
}

// modelScope is the context scope of the model's variables (the optimizer
// keeps its state elsewhere).
const modelScope = "model"

// NewPolicy builds the policy on GoMLX's pure-Go backend, its weights drawn
// from cfg.Seed.
func NewPolicy(cfg ModelConfig, maxLen int) (*Policy, error) {
	backend, err := backends.NewWithConfig(backendConfig)
	if err != nil {
		return nil, fmt.Errorf("gomlx backend: %w", err)
	}
	return newPolicy(cfg, maxLen, backend, nil)
}

// Clone returns a policy with a copy of p's weights and a fresh optimizer
// (its own learning rate), on the same backend.
func (p *Policy) Clone(learningRate float64) (*Policy, error) {
	cfg := p.cfg
	cfg.LearningRate = learningRate
	return newPolicy(cfg, p.maxLen, p.backend, p.ctx)
}

func newPolicy(cfg ModelConfig, maxLen int, backend backends.Backend, from *context.Context) (*Policy, error) {
	ctx := context.New().Checked(false)
	ctx.SetParam(context.ParamInitialSeed, cfg.Seed)
	if from != nil {
		for v := range from.IterVariables() {
			if v.Scope() != "/"+modelScope && !strings.HasPrefix(v.Scope(), "/"+modelScope+"/") {
				continue
			}
			if _, err := v.CloneToContext(ctx); err != nil {
				return nil, err
			}
		}
	}
	p := &Policy{cfg: cfg, backend: backend, ctx: ctx, maxLen: maxLen, vocab: VocabSize}
	opt := optimizers.Adam().LearningRate(cfg.LearningRate).Done()
	var err error
	p.forward, err = context.NewExec(backend, ctx, func(ctx *context.Context, tokens, bias *Node) *Node {
		return LogSoftmax(Add(p.logits(ctx, tokens), bias))
	})
	if err != nil {
		return nil, err
	}
	// The loss is -sum_t w_t log pi(target_t | tokens_<=t) over every part
	// (four inputs each: tokens, bias, targets, weights): a per-position
	// weight carries the row's coefficient; zero weights mask prompts,
	// padding and forced tokens.
	p.trainer, err = context.NewExec(backend, ctx, func(ctx *context.Context, inputs []*Node) []*Node {
		var loss *Node
		for i := 0; i+3 < len(inputs); i += 4 {
			tokens, bias, targets, weights := inputs[i], inputs[i+1], inputs[i+2], inputs[i+3]
			logp := LogSoftmax(Add(p.logits(ctx, tokens), bias))
			picked := ReduceSum(Mul(logp, OneHot(targets, p.vocab, dtypes.Float32)), -1)
			l := Neg(ReduceAllSum(Mul(picked, weights)))
			if loss == nil {
				loss = l
			} else {
				loss = Add(loss, l)
			}
		}
		opt.UpdateGraph(ctx, loss.Graph(), loss)
		return []*Node{loss}
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// logits is the transformer: token and position embeddings, cfg.Layers
// blocks of causal self-attention and a ReLU MLP (pre-norm, residual), and
// a final projection to the vocabulary. tokens is [B, T] int32.
func (p *Policy) logits(ctx *context.Context, tokens *Node) *Node {
	g := tokens.Graph()
	ctx = ctx.In(modelScope)
	d := p.cfg.Dim
	seqLen := tokens.Shape().Dimensions[1]
	x := layers.Embedding(ctx.In("embed"), tokens, dtypes.Float32, p.vocab, d)
	positions := Iota(g, shapes.Make(dtypes.Int32, tokens.Shape().Dimensions[0], seqLen), 1)
	x = Add(x, layers.Embedding(ctx.In("position"), positions, dtypes.Float32, p.maxLen, d))
	for l := range p.cfg.Layers {
		c := ctx.Inf("block%d", l)
		h := layers.LayerNormalization(c.In("norm1"), x, -1).Done()
		h = layers.MultiHeadAttention(c.In("attention"), h, h, h, p.cfg.Heads, d/p.cfg.Heads).
			UseCausalMask().SetOutputDim(d).Done()
		x = Add(x, h)
		h = layers.LayerNormalization(c.In("norm2"), x, -1).Done()
		h = layers.DenseWithBias(c.In("up"), h, p.cfg.Hidden)
		h = activations.Relu(h)
		h = layers.DenseWithBias(c.In("down"), h, d)
		x = Add(x, h)
	}
	x = layers.LayerNormalization(ctx.In("norm"), x, -1).Done()
	return layers.DenseWithBias(ctx.In("out"), x, p.vocab)
}

// LogProbs returns log pi(v | tokens[b, :t+1]) for every row b, position t
// and token v, flat in [B, T, V] order, with the grammar's bias added
// before the softmax (bias -inf-like for disallowed tokens).
func (p *Policy) LogProbs(tokens []int32, bias []float32, rows, seqLen int) ([]float32, error) {
	out, err := p.forward.Exec(
		tensors.FromFlatDataAndDimensions(tokens, rows, seqLen),
		tensors.FromFlatDataAndDimensions(bias, rows, seqLen, p.vocab))
	if err != nil {
		return nil, err
	}
	defer out[0].FinalizeAll()
	return tensors.CopyFlatData[float32](out[0])
}

// Step takes one Adam step on the loss of the parts (see Part) and returns
// the loss before the step. Parts with no rows are skipped; with none left
// Step does nothing.
func (p *Policy) Step(parts ...Part) (float64, error) {
	var args []any
	for _, part := range parts {
		if len(part.Rows) == 0 {
			continue
		}
		tokens, bias, targets, weights := layout(part.Rows, part.SeqLen, part.Grammar, part.Coef)
		n := len(part.Rows)
		args = append(args,
			tensors.FromFlatDataAndDimensions(tokens, n, part.SeqLen),
			tensors.FromFlatDataAndDimensions(bias, n, part.SeqLen, p.vocab),
			tensors.FromFlatDataAndDimensions(targets, n, part.SeqLen),
			tensors.FromFlatDataAndDimensions(weights, n, part.SeqLen))
	}
	if len(args) == 0 {
		return 0, nil
	}
	out, err := p.trainer.Exec(args...)
	if err != nil {
		return 0, err
	}
	defer out[0].FinalizeAll()
	v, err := tensors.CopyFlatData[float32](out[0])
	if err != nil {
		return 0, err
	}
	return float64(v[0]), nil
}

// backendConfig selects GoMLX's pure-Go backend with its operations run one
// after another: in the default mode, parallel operations that each wait
// for a worker of the same pool can block one another forever on a
// machine with few cores.
const backendConfig = "go:ops_sequential"

// savedVariable is one model variable in a checkpoint.
type savedVariable struct {
	Scope, Name string
	Dims        []int
	Data        []float32
}

// Save writes the policy's model weights (not the optimizer's state) to
// path, in gob.
func (p *Policy) Save(path string) error {
	var vars []savedVariable
	for v := range p.ctx.IterVariables() {
		if v.Scope() != "/"+modelScope && !strings.HasPrefix(v.Scope(), "/"+modelScope+"/") {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return err
		}
		data, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return err
		}
		vars = append(vars, savedVariable{Scope: v.Scope(), Name: v.Name(), Dims: v.Shape().Dimensions, Data: data})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := gob.NewEncoder(f).Encode(vars); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Load returns a policy of p's shape, on p's backend, with the weights that
// Save wrote to path.
func (p *Policy) Load(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var vars []savedVariable
	if err := gob.NewDecoder(f).Decode(&vars); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	from := context.New().Checked(false)
	for _, v := range vars {
		from.InAbsPath(v.Scope).VariableWithValue(v.Name, tensors.FromFlatDataAndDimensions(v.Data, v.Dims...))
	}
	return newPolicy(p.cfg, p.maxLen, p.backend, from)
}
