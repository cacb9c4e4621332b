package charttest

import (
	"image"
	"image/color"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestColouredRows counts the rows with a strongly coloured pixel; greys,
// however dark, and faint tints count for none (the control).
func TestColouredRows(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 10, 6))
	for y := range 6 {
		for x := range 10 {
			img.Set(x, y, color.Gray{Y: uint8(40 * y)})
		}
	}
	assert.Zero(t, ColouredRows(img), "greys only")
	img.Set(3, 1, color.RGBA{R: 0xE0, G: 0xD0, B: 0xD0, A: 0xFF}) // a faint tint
	assert.Zero(t, ColouredRows(img))
	img.Set(9, 2, color.RGBA{R: 0xF1, G: 0x5A, B: 0x60, A: 0xFF}) // the palette's red
	img.Set(0, 4, color.RGBA{R: 0x5A, G: 0x9B, B: 0xD4, A: 0xFF})
	img.Set(5, 4, color.RGBA{R: 0x5A, G: 0x9B, B: 0xD4, A: 0xFF}) // same row
	assert.Equal(t, 2, ColouredRows(img))
}
